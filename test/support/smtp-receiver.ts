/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package) for the email channel's tests. It
 * keeps every message it accepts, parsed by mailparser, with what the session looked like: whether
 * the connection was TLS (STARTTLS or from the start), who logged in, the envelope. Scripted
 * refusals (`rejectRcpt`, `rejectData`) answer with a given SMTP code; `onAuth` decides logins.
 * selfSignedCert() makes a key and a certificate for 127.0.0.1 with openssl.
 */
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { execa } from 'execa';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMail {
  parsed: ParsedMail;
  raw: string;
  secure: boolean;
  user?: string;
  mailFrom: string;
  rcptTo: string[];
}

export interface SmtpReceiverOptions {
  tls?: { key: Buffer; cert: Buffer };
  /** TLS from the first byte (SMTPS) instead of STARTTLS. */
  implicitTls?: boolean;
  /** No STARTTLS offered. */
  noStartTls?: boolean;
  /** Accepts this user and password, refusing others with a 535 that echoes what was tried. */
  login?: { user: string; pass: string };
  rejectRcpt?: { code: number; text: string };
  rejectData?: { code: number; text: string };
}

function smtpError(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

export class SmtpReceiver {
  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
    /** Every message accepted, in order. */
    readonly mails: ReceivedMail[],
  ) {}

  static async start(opts: SmtpReceiverOptions = {}): Promise<SmtpReceiver> {
    const mails: ReceivedMail[] = [];
    const config: SMTPServerOptions = {
      logger: false,
      secure: opts.implicitTls ?? false,
      ...(opts.tls ? { key: opts.tls.key, cert: opts.tls.cert } : {}),
      disabledCommands: opts.noStartTls || !opts.tls ? ['STARTTLS'] : [],
      authOptional: !opts.login,
      onAuth(auth, _session, cb) {
        const { login } = opts;
        if (login && auth.username === login.user && auth.password === login.pass)
          return cb(null, { user: auth.username });
        // A careless server that repeats what it was sent: the channel must not pass it on.
        cb(smtpError(535, `authentication failed for ${auth.username} with password ${auth.password}`));
      },
      onRcptTo(_address, _session, cb) {
        if (opts.rejectRcpt) return cb(smtpError(opts.rejectRcpt.code, opts.rejectRcpt.text));
        cb();
      },
      onData(stream, session, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (opts.rejectData) return cb(smtpError(opts.rejectData.code, opts.rejectData.text));
          const raw = Buffer.concat(chunks).toString('utf8');
          void simpleParser(raw).then((parsed) => {
            mails.push({
              parsed,
              raw,
              secure: session.secure,
              user: session.user as string | undefined,
              mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              rcptTo: session.envelope.rcptTo.map((r) => r.address),
            });
            cb();
          }, cb);
        });
      },
    };
    const server = new SMTPServer(config);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.server.address() as AddressInfo;
    return new SmtpReceiver(server, port, mails);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A key and a self-signed certificate valid for 127.0.0.1 and localhost, written into `dir`. */
export async function selfSignedCert(dir: string): Promise<{ key: Buffer; cert: Buffer; certFile: string }> {
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  await execa('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ]);
  return { key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile), certFile };
}
