/**
 * The actuator's side of a message (messages.ts): record it as Delivering in status, then type it
 * with verified delivery (agents/send.ts: the pane's lock, paste, submit, confirm) beside the loop,
 * and hand the outcome to the next pass. Crash-only: nothing is typed unless Delivering was stored
 * first, against a version of the session that still carries the message (a sender that withdrew
 * it wins the compare-and-swap); a node that stops after that leaves Delivering behind, which the
 * next pass reports Unconfirmed instead of typing it again.
 */
import { MESSAGE_ANNOTATION, parseMessage } from '../../api/message.js';
import type { AgentSession, DeliveryResult } from '../../api/session.js';
import { sendToSession } from '../../agents/send.js';
import { isBindingFenced, writeOwnedStatus } from '../../client/status.js';
import type { Tmux } from '../../observers/tmux.js';
import { retryOnConflict } from '../../store/retry.js';
import type { Store } from '../../store/store.js';
import type { Effect } from './effects.js';

type Deliver = Extract<Effect, { type: 'DeliverMessage' }>;
type InFlight = { id: string; result: DeliveryResult | 'pending' };

/** Compare-and-swap attempts at recording Delivering before the message is given up for this pass. */
const RECORD_ATTEMPTS = 5;

/** The status write lost (a stale read, most likely): read again. A failed read is not retried. */
class WriteLost extends Error {}

export class MessageDeliveries {
  /** By session key: one message at a time per session. */
  private readonly inFlight = new Map<string, InFlight>();

  constructor(
    private readonly d: { store: Store; tmux: Tmux; enqueue: (key: string) => void },
    private readonly log: (obj: AgentSession, run: number, warn: boolean, line: string) => void,
  ) {}

  /** What is known of `key`'s message: in flight, finished, or nothing (a lost outcome). */
  get(key: string): InFlight | undefined {
    return this.inFlight.get(key);
  }

  forget(key: string, id: string): void {
    if (this.inFlight.get(key)?.id === id) this.inFlight.delete(key);
  }

  /** Records Delivering (awaited), then types the message beside the loop. */
  async start(key: string, obj: AgentSession, e: Deliver): Promise<void> {
    if (this.inFlight.get(key)?.result === 'pending') return;
    // Not recorded (withdrawn, moved, fenced): not typed; the next pass decides again from the store.
    if (!(await this.record(obj, e))) return;
    this.inFlight.set(key, { id: e.request.id, result: 'pending' });
    const [namespace, name] = key.split('/');
    const { text, force } = e.request;
    void sendToSession(this.d.store, this.d.tmux, namespace, name, { text, force })
      .catch((err: Error): DeliveryResult => ({ delivered: false, reason: 'SendFailed', message: err.message }))
      .then((r) => {
        this.inFlight.set(key, { id: e.request.id, result: r });
        this.log(obj, e.run, !r.delivered, `message ${e.request.id}: ${r.reason}: ${r.message}`);
        this.d.enqueue(key);
      });
  }

  /**
   * Delivering in status, written against a fresh read that still holds this message: false when
   * it was withdrawn, this node may not write (moved, fenced) or it kept losing the race.
   */
  private async record(obj: AgentSession, e: Deliver): Promise<boolean> {
    const m = obj.metadata;
    // One write attempt per read: a conflict means reading again, to see whether it is still posted.
    return retryOnConflict(
      async () => {
        const fresh = await this.d.store.get({ kind: 'AgentSession', namespace: m.namespace ?? '', name: m.name });
        const posted = parseMessage(fresh?.metadata.annotations?.[MESSAGE_ANNOTATION]);
        if (!fresh || !posted?.ok || posted.request.id !== e.request.id) return false;
        try {
          await writeOwnedStatus(this.d.store, fresh, 'session', { messageDelivery: e.record }, 1);
          return true;
        } catch (err) {
          if (isBindingFenced(err)) return false;
          throw new WriteLost(String(err));
        }
      },
      { attempts: RECORD_ATTEMPTS, retryOn: (err) => err instanceof WriteLost },
    ).catch((err: unknown) => {
      if (err instanceof WriteLost) return false;
      throw err;
    });
  }
}
