/**
 * What each channel sends, built without I/O: Slack's body with untrusted text escaped and within
 * its block limits, ntfy's headers (priority per tier, RFC 2047 for non-ASCII) and its 4 KiB body,
 * the email's subject and Message-ID derived from the idempotency key, the command's arguments
 * substituted in one pass, and every field of the JSON message bounded.
 */
import { describe, expect, it } from 'vitest';
import type { NotificationEventRef, NotificationMessage } from '../../../controller/api/notification-channel.js';
import {
  MAX_BODY,
  MAX_EVENTS,
  NTFY_MESSAGE_MAX_BYTES,
  SLACK_HEADER_MAX,
  SLACK_SECTION_MAX,
  clip,
  clipBytes,
  commandArgs,
  commandEnv,
  emailContent,
  headerValue,
  jsonPayload,
  messageIdFor,
  mrkdwnEscape,
  ntfyRequest,
  oneLine,
  safeLink,
  slackPayload,
} from '../../../controller/notify/format.js';

const event = (i: number, over: Partial<NotificationEventRef> = {}): NotificationEventRef => ({
  type: 'Warning',
  reason: 'BackOff',
  message: `restart ${i}`,
  involvedObject: { kind: 'AgentSession', namespace: 'default', name: `s${i}` },
  ...over,
});

const msg = (over: Partial<NotificationMessage> = {}): NotificationMessage => ({
  idempotencyKey: 'k1',
  tier: 2,
  title: 'Waiting for input',
  body: 'fix-login asks a question',
  ...over,
});

describe('bounds', () => {
  it('clip cuts to the limit with an ellipsis and never splits a surrogate pair', () => {
    expect(clip('abcdef', 6)).toBe('abcdef');
    expect(clip('abcdef', 4)).toBe('abc…');
    expect(clip('ab😀cd', 4)).toBe('ab…'); // 😀 is two units; half of it would be garbage
  });

  it('clipBytes counts UTF-8 bytes and never splits a character', () => {
    const s = 'ä'.repeat(10); // 20 bytes
    expect(clipBytes(s, 20)).toBe(s);
    const cut = clipBytes(s, 10);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(10);
    expect(cut).toBe('äää…'); // 7 bytes kept are three ä and half of one: the half goes
    expect(cut).not.toContain('\uFFFD');
  });

  it('oneLine folds line breaks and drops control characters', () => {
    expect(oneLine(' a\r\nb\tc\u0007d \n')).toBe('a b cd');
  });

  it('safeLink keeps http(s) only', () => {
    expect(safeLink('https://example.test/a b')).toBe('https://example.test/a%20b');
    expect(safeLink('javascript:alert(1)')).toBeUndefined();
    expect(safeLink('file:///etc/passwd')).toBeUndefined();
    expect(safeLink('not a url')).toBeUndefined();
    expect(safeLink(`https://example.test/${'a'.repeat(3000)}`)).toBeUndefined();
  });

  it('the JSON message has every field bounded and says how many events were left out', () => {
    const m = msg({
      title: `line one\nline two ${'t'.repeat(400)}`,
      body: `x${'\u0000'}${'b'.repeat(MAX_BODY * 2)}`,
      events: Array.from({ length: MAX_EVENTS + 5 }, (_, i) => event(i, { message: 'm'.repeat(2000) })),
      link: 'ftp://example.test/file',
    });
    const p = jsonPayload('ops', m);
    expect(p.title.startsWith('line one line two')).toBe(true);
    expect(p.title.length).toBe(250);
    expect(p.body.length).toBe(MAX_BODY);
    expect(p.body).not.toContain('\u0000');
    expect(p.events).toHaveLength(MAX_EVENTS);
    expect(p.moreEvents).toBe(5);
    expect(p.events?.[0].message.length).toBe(500);
    expect(p).not.toHaveProperty('link');
    expect(p).toMatchObject({ idempotencyKey: 'k1', channel: 'ops', tier: 2, tierName: 'action' });
  });
});

describe('Slack', () => {
  it('escapes & < > in every mrkdwn text, so untrusted text can neither mention nor link', () => {
    expect(mrkdwnEscape('a & <!here> <@U1> <http://x|y>')).toBe('a &amp; &lt;!here&gt; &lt;@U1&gt; &lt;http://x|y&gt;');
    const p = slackPayload(
      msg({
        title: '<!channel> title',
        body: 'body <!everyone>',
        events: [event(1, { reason: '<b>', message: '<@U123> & more' })],
      }),
    );
    const mrkdwn = [
      p.text,
      ...p.blocks.flatMap((b) => ('text' in b ? [b.text] : (b.elements as { type: string; text: string }[]))),
    ]
      .map((t) => (typeof t === 'string' ? { type: 'mrkdwn', text: t } : t))
      .filter((t) => t.type === 'mrkdwn')
      .map((t) => t.text);
    expect(mrkdwn.length).toBe(4); // fallback text, body, events, context
    for (const t of mrkdwn) expect(t).not.toMatch(/<[!@]/);
    expect(p.text).toBe('[action] &lt;!channel&gt; title');
    // The header block is plain_text, which Slack shows as written.
    expect(p.blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: '<!channel> title', emoji: false },
    });
  });

  it('keeps every text within Slack limits, counting the escaped length', () => {
    const p = slackPayload(msg({ title: 'T'.repeat(500), body: '&'.repeat(5000) }));
    const header = p.blocks[0];
    const section = p.blocks[1];
    if (header.type !== 'header' || section.type !== 'section') throw new Error('unexpected blocks');
    expect(header.text.text.length).toBe(SLACK_HEADER_MAX);
    expect(section.text.text.length).toBeLessThanOrEqual(SLACK_SECTION_MAX);
    expect(section.text.text.length).toBeGreaterThan(SLACK_SECTION_MAX - 10);
    expect(section.text.text).toMatch(/^(&amp;)+…$/);
  });

  it('omits an empty body, lists events, and makes a link that cannot break out of <url|text>', () => {
    const p = slackPayload(
      msg({ body: '  ', events: [event(1, { count: 3 })], link: 'https://grafana.test/d?a=1&b=x|y' }),
    );
    expect(p.blocks.map((b) => b.type)).toEqual(['header', 'section', 'context']);
    const events = p.blocks[1];
    if (events.type !== 'section') throw new Error('unexpected block');
    expect(events.text.text).toBe('• *BackOff* AgentSession default/s1 ×3: restart 1');
    const ctx = p.blocks[2];
    if (ctx.type !== 'context') throw new Error('unexpected block');
    expect(ctx.elements[0].text).toBe('orchctl · tier 2 (action) · <https://grafana.test/d?a=1&amp;b=x%7Cy|open>');
  });
});

describe('ntfy', () => {
  it('priority per tier: 1 → 5 (urgent), 2 → 4, 3 → 2 (low), 4 → 1', () => {
    expect(([1, 2, 3, 4] as const).map((tier) => ntfyRequest(msg({ tier })).headers.Priority)).toEqual([
      '5',
      '4',
      '2',
      '1',
    ]);
  });

  it('title and tags as header values: ASCII as is, anything else as an RFC 2047 word', () => {
    expect(headerValue('plain title')).toBe('plain title');
    expect(headerValue('two\r\nlines')).toBe('two lines'); // no header injection
    const word = headerValue('Grüße');
    expect(word).toBe(`=?UTF-8?B?${Buffer.from('Grüße').toString('base64')}?=`);
    const r = ntfyRequest(msg({ tier: 1, events: [event(1), event(2), event(3, { reason: 'Stalled' })] }), ['a,b']);
    expect(r.headers.Tags).toBe('rotating_light,a b,BackOff,Stalled');
    expect(r.headers).not.toHaveProperty('Click');
  });

  it('the body stays within 4 KiB of UTF-8 and falls back to the title when empty', () => {
    const r = ntfyRequest(msg({ body: '€'.repeat(5000) }));
    expect(Buffer.byteLength(r.body)).toBeLessThanOrEqual(NTFY_MESSAGE_MAX_BYTES);
    expect(Buffer.byteLength(r.body)).toBeGreaterThan(NTFY_MESSAGE_MAX_BYTES - 8);
    expect(ntfyRequest(msg({ body: '' })).body).toBe('Waiting for input');
  });
});

describe('email', () => {
  it('the Message-ID comes from the idempotency key and the sender domain', () => {
    const a = messageIdFor('ns/s:Escalated:1', 'orchctl <bot@Example.TEST>');
    expect(a).toMatch(/^<orchctl\.[0-9a-f]{32}@example\.test>$/);
    expect(messageIdFor('ns/s:Escalated:1', 'bot@example.test')).toBe(a);
    expect(messageIdFor('ns/s:Escalated:2', 'bot@example.test')).not.toBe(a);
    expect(messageIdFor('k', 'no address')).toMatch(/@orchctl\.invalid>$/);
  });

  it('subject by tier, priority, events and link in the text', () => {
    const c = emailContent(
      msg({ tier: 1, title: 'a\nb', events: [event(1)], link: 'https://x.test/s' }),
      'bot@example.test',
    );
    expect(c.subject).toBe('[orchctl urgent] a b');
    expect(c.priority).toBe('high');
    expect(c.headers).toEqual({ 'X-Orchctl-Idempotency-Key': 'k1', 'X-Orchctl-Tier': '1' });
    expect(c.text).toBe(
      'fix-login asks a question\n\nEvents:\n- Warning BackOff AgentSession default/s1: restart 1\n\n' +
        'Open: https://x.test/s\n\n-- \norchctl notification, tier 1 (urgent)\n',
    );
    expect(emailContent(msg({ tier: 3 }), 'b@x.test').priority).toBe('low');
  });
});

describe('command', () => {
  it('substitutes placeholders in one pass and leaves unknown ones', () => {
    const m = msg({ title: '{{body}} $(id)', body: 'B', tier: 1, link: 'https://x.test/' });
    expect(
      commandArgs(['notify-send', '--', '{{title}}', '{{body}}', '{{tierName}}:{{tier}}', '{{link}}', '{{nope}}'], m),
    ).toEqual(['notify-send', '--', '{{body}} $(id)', 'B', 'urgent:1', 'https://x.test/', '{{nope}}']);
  });

  it('the environment carries the message fields, one line each', () => {
    expect(commandEnv('desk', msg({ title: 'a\nb' }))).toEqual({
      ORCHCTL_NOTIFICATION_CHANNEL: 'desk',
      ORCHCTL_NOTIFICATION_TIER: '2',
      ORCHCTL_NOTIFICATION_TIER_NAME: 'action',
      ORCHCTL_NOTIFICATION_TITLE: 'a b',
      ORCHCTL_NOTIFICATION_IDEMPOTENCY_KEY: 'k1',
      ORCHCTL_NOTIFICATION_KEY: 'k1',
      ORCHCTL_NOTIFICATION_LINK: '',
    });
  });
});

describe('action links in each channel', () => {
  const actions = [
    { action: 'approve' as const, label: 'Approve', url: 'https://console.example.org/link?t=v1.aaa.bbb' },
    { action: 'reject' as const, label: 'Reject', url: 'https://console.example.org/link?t=v1.ccc.ddd' },
  ];

  it('puts them in the JSON message as an actions field, and leaves the field out without links', () => {
    expect(jsonPayload('ops', msg({ actions })).actions).toEqual(actions);
    expect(jsonPayload('ops', msg())).not.toHaveProperty('actions');
  });

  it('makes them Slack URL buttons in an actions block', () => {
    const blocks = slackPayload(msg({ actions })).blocks;
    expect(blocks.find((b) => b.type === 'actions')).toEqual({
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: 'Approve', emoji: false },
          url: actions[0].url,
          action_id: 'orchctl-approve',
          style: 'primary',
        },
        {
          type: 'button',
          text: { type: 'plain_text', text: 'Reject', emoji: false },
          url: actions[1].url,
          action_id: 'orchctl-reject',
          style: 'danger',
        },
      ],
    });
    expect(slackPayload(msg()).blocks.some((b) => b.type === 'actions')).toBe(false);
  });

  it("makes them ntfy 'view' actions that open the confirmation page", () => {
    expect(ntfyRequest(msg({ actions })).headers.Actions).toBe(
      `view, Approve, ${actions[0].url}; view, Reject, ${actions[1].url}`,
    );
    expect(ntfyRequest(msg()).headers).not.toHaveProperty('Actions');
  });

  it('lists them in the email body, saying each asks to confirm', () => {
    expect(emailContent(msg({ actions }), 'o@example.org').text).toContain(
      `Approve: ${actions[0].url}\nReject: ${actions[1].url}\n(each link opens a page that asks you to confirm)`,
    );
  });

  it('drops a link that is not http(s)', () => {
    const bad = [{ action: 'approve' as const, label: 'Approve', url: 'javascript:alert(1)' }];
    expect(jsonPayload('ops', msg({ actions: bad }))).not.toHaveProperty('actions');
  });
});
