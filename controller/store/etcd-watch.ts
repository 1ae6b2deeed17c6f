/**
 * Store.watch on etcd: one gRPC watch stream over the objects of a kind (and namespace), from
 * fromRevision + 1, with prev_kv so a DELETED event carries the object as it was. Types come from
 * the key's revisions: ADDED when create_revision == mod_revision, else MODIFIED. When the stream
 * breaks (a member killed, a leader election) it is opened again, on any member, from the last
 * revision delivered + 1: nothing is lost or repeated. A start revision etcd has compacted ends
 * the watch with reason Gone (the informer lists again, as with Kubernetes' 410).
 * etcd3's own Watcher is not used: it moves its resume point to a response's header revision,
 * which can skip events still to come while a watch catches up on history.
 */
import type { Etcd3, IEvent, IWatchResponse } from 'etcd3';
import { ApiError } from '../api/errors.js';
import type { Resource } from '../api/types.js';
import type { EtcdKeys } from './etcd-keys.js';
import { rangeEnd } from './etcd-keys.js';
import { decodeObject } from './etcd-txn.js';
import type { WatchEvent, WatchHandle, WatchOptions } from './store.js';

type Stream = Awaited<ReturnType<Etcd3['watchClient']['watch']>>;

const MAX_BACKOFF_MS = 1000;

export function watchObjects(
  client: Etcd3,
  keys: EtcdKeys,
  opts: WatchOptions,
  onEvent: (ev: WatchEvent) => void,
  onError?: (err: Error) => void,
): WatchHandle {
  // Narrowed on the server by key range; a namespace without a kind is filtered here.
  const prefix = keys.objects(opts.kind, opts.kind === undefined ? undefined : opts.namespace);
  let last = opts.fromRevision;
  let closed = false;
  let stream: Stream | undefined;
  let backoff = 50;
  let retryTimer: NodeJS.Timeout | undefined;

  const stop = () => {
    closed = true;
    clearTimeout(retryTimer);
    stream?.cancel();
    stream = undefined;
  };

  const retry = () => {
    if (closed) return;
    retryTimer = setTimeout(open, backoff);
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  };

  const reopen = (from: Stream) => {
    if (closed || stream !== from) return; // an old stream's late news
    from.cancel();
    stream = undefined;
    retry();
  };

  const deliver = (res: IWatchResponse) => {
    const from = last; // events of one revision arrive in one response: resume after the last one
    for (const ev of res.events) {
      const rev = Number(ev.kv.mod_revision);
      if (rev <= from) continue;
      const event = toEvent(keys, ev, rev);
      if (!event || (opts.namespace !== undefined && (event.object.metadata.namespace ?? '') !== opts.namespace))
        continue;
      last = Math.max(last, rev);
      try {
        onEvent(event);
      } catch (e) {
        onError?.(e as Error);
      }
      if (closed) return;
    }
    for (const ev of res.events) last = Math.max(last, Number(ev.kv.mod_revision));
  };

  const open = async () => {
    if (closed) return;
    let s: Stream;
    try {
      s = await client.watchClient.watch();
    } catch {
      // No member answers: keep trying (bounded backoff); the caller sees no events meanwhile.
      retry();
      return;
    }
    if (closed) {
      s.cancel();
      return;
    }
    stream = s;
    s.on('data', (res: IWatchResponse) => {
      if (closed || stream !== s) return;
      if (res.canceled) {
        if (Number(res.compact_revision) > 0) {
          stop();
          onError?.(
            new ApiError(
              'Gone',
              `revision ${last} has been compacted (etcd keeps history from revision ${res.compact_revision}); ` +
                'list again and watch from the new revision',
            ),
          );
        } else reopen(s);
        return;
      }
      backoff = 50;
      if (res.events?.length) deliver(res);
    });
    s.on('error', () => reopen(s));
    s.on('end', () => reopen(s));
    s.write({
      create_request: {
        key: Buffer.from(prefix),
        range_end: rangeEnd(prefix),
        start_revision: last + 1,
        prev_kv: true,
      },
    });
  };

  void open();
  return { close: stop };
}

function toEvent(keys: EtcdKeys, ev: IEvent, revision: number): WatchEvent | undefined {
  const key = keys.parseObject(ev.kv.key.toString());
  if (!key) return undefined;
  if (ev.type === 'Delete') {
    // The object as it was, with the deletion's revision (as the SQLite backend reports it).
    const object: Resource = ev.prev_kv
      ? decodeObject(ev.prev_kv, revision)
      : { apiVersion: '', kind: key.kind, metadata: { name: key.name, namespace: key.namespace || undefined } };
    return { type: 'DELETED', object, revision };
  }
  const type = ev.kv.create_revision === ev.kv.mod_revision ? 'ADDED' : 'MODIFIED';
  return { type, object: decodeObject(ev.kv), revision };
}
