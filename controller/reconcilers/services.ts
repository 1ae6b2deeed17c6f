/**
 * What the reconcilers' setup functions share besides the manager: the observers and writers of
 * one controller process, built once in controller/app/controller.ts. A setup's own extras (its
 * intervals, metrics hooks, event sources) are in its own deps type beside it.
 */
import type { EventRecorder } from '../client/events.js';
import type { GitObserver } from '../observers/git.js';
import type { HostSnapshot } from '../observers/host.js';
import type { PaneObserver } from '../observers/panes.js';
import type { Tmux } from '../observers/tmux.js';
import type { Logger } from '../runtime/log.js';

export interface ControllerServices {
  /** The state directory (run workspaces, event logs, audit log, checkpoints). */
  home: string;
  log: Logger;
  recorder: EventRecorder;
  tmux: Tmux;
  /** One `list-panes` snapshot shared by every reconcile of a tick. */
  panes: PaneObserver;
  git: GitObserver;
  /** CPU, memory and disk of this host (cached for 2 s). */
  host: () => HostSnapshot;
  /** This store's identity (the `@orchctl-store` tag of the tmux sessions it launched). */
  storeUid: string;
}
