/**
 * Prompt delivery for any agent CLI (the verified, Claude-Code-specific path plugs in beside
 * this one): wait until the pane has drawn and settled, paste the prompt file through a
 * uniquely named tmux buffer (bracketed paste where the program asked for it), then send the
 * submit keys. Argument and stdin delivery happen at launch; `none` sends nothing.
 */
import fs from 'node:fs';
import { parseDuration } from '../api/duration.js';
import type { AgentSpec } from '../api/kinds.js';
import type { Tmux } from '../observers/tmux.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface DeliveryResult {
  delivered: boolean;
  reason: string;
  message: string;
}

/** Ready = something drawn and unchanged for `settleMs`, or nothing drawn for `quietMs`. */
export async function waitForPaneSettled(tmux: Tmux, pane: string, timeoutMs: number, settleMs = 300, quietMs = 1500): Promise<boolean> {
  const start = Date.now();
  let last = '';
  let lastChange = start;
  while (Date.now() - start < timeoutMs) {
    const text = (await tmux.capture(pane, 50)).trimEnd();
    const now = Date.now();
    if (text !== last) {
      last = text;
      lastChange = now;
    } else if ((text && now - lastChange >= settleMs) || (!text && now - start >= quietMs)) return true;
    await sleep(100);
  }
  return false;
}

export async function deliverPrompt(tmux: Tmux, pane: string, agent: AgentSpec, promptFile: string, bufferName: string): Promise<DeliveryResult> {
  const mode = agent.promptDelivery ?? 'paste';
  if (mode !== 'paste') return { delivered: true, reason: mode === 'none' ? 'NoPrompt' : `DeliveredBy${mode[0].toUpperCase()}${mode.slice(1)}`, message: `prompt delivery: ${mode}` };
  const ready = await waitForPaneSettled(tmux, pane, parseDuration(agent.readyTimeout ?? '30s'));
  // Without its final newline: the submit keys, not the paste, submit the prompt.
  await tmux.pasteText(pane, fs.readFileSync(promptFile, 'utf8').replace(/\n+$/, ''), bufferName);
  await sleep(150); // let the program take the paste before the submit key arrives
  try {
    await tmux.sendKeys(pane, agent.submitKeys ?? ['Enter']);
  } catch (e) {
    return { delivered: false, reason: 'SubmitFailed', message: `pasted, but the submit keys could not be sent: ${(e as Error).message}` };
  }
  return ready
    ? { delivered: true, reason: 'Pasted', message: 'prompt pasted and submitted' }
    : { delivered: true, reason: 'PastedBeforeReady', message: 'prompt pasted after the ready timeout passed without the pane settling' };
}
