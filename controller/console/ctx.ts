import type { FastifyRequest } from 'fastify';
import type { Store } from '../store/store.js';
import type { Actor } from './actions.js';
import type { Login } from './auth.js';
import type { Hub } from './hub.js';
import type { TerminalFeeds } from './terminal.js';

/** What every page handler gets: the login, the tools of an action, the live feeds. */
export interface Ctx {
  store: Store;
  home: string;
  hub: Hub;
  terminals: TerminalFeeds;
  login: (req: FastifyRequest) => Login;
  actor: (req: FastifyRequest) => Actor;
}
