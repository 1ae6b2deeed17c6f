/**
 * The connection to etcd (npm `etcd3`, whose raw KV and Watch clients the backend uses): endpoint
 * checks (plaintext only on loopback), TLS files, and a deadline on every call. An etcd leader
 * loss stalls writes for seconds and a lost quorum stalls them for ever, so nothing here waits
 * without a bound: a call past its deadline fails with reason Timeout, naming the endpoints.
 */
import { plaintextRefusal } from '../api/endpoint.js';
import fs from 'node:fs';
import { handleWhen, noop, retry } from 'cockatiel';
import { Etcd3, GRPCDeadlineExceededError, GRPCUnavailableError, type IOptions, isRecoverableError } from 'etcd3';
import { ApiError, isApiError } from '../api/errors.js';

export interface EtcdTls {
  ca?: string;
  cert?: string;
  key?: string;
}

/**
 * Endpoints as URLs (`host:port` means http://host:port). Plaintext is refused unless the endpoint
 * is on this host: anyone on the path could read every object and write any of them.
 */
export function checkEndpoints(endpoints: string[], tls?: EtcdTls): string[] {
  if (!endpoints.length) throw new ApiError('BadRequest', 'etcd store: no endpoints given');
  return endpoints.map((raw) => {
    const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
    let url: URL;
    try {
      url = new URL(withScheme);
    } catch {
      throw new ApiError('BadRequest', `etcd endpoint "${raw}" is not a URL (want https://host:port)`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ApiError('BadRequest', `etcd endpoint "${raw}": use https:// (or http:// on loopback)`);
    if (plaintextRefusal(url))
      throw new ApiError(
        'BadRequest',
        `etcd endpoint "${raw}" is plaintext http to another host: use https:// with a CA ` +
          '(and a client certificate and key); plaintext is allowed only on loopback (127.0.0.0/8, ::1, localhost)',
      );
    if (url.protocol === 'http:' && (tls?.ca || tls?.cert || tls?.key))
      throw new ApiError('BadRequest', `etcd endpoint "${raw}" is http:// but TLS files were given: use https://`);
    return `${url.protocol}//${url.host}`;
  });
}

function readPem(what: string, file: string | undefined): Buffer | undefined {
  if (!file) return undefined;
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw new ApiError('BadRequest', `etcd ${what} file ${file}: ${(e as Error).message}`);
  }
}

export function connectEtcd(endpoints: string[], tls: EtcdTls | undefined, attemptTimeoutMs: number): Etcd3 {
  const ca = readPem('CA', tls?.ca);
  const cert = readPem('client certificate', tls?.cert);
  const key = readPem('client key', tls?.key);
  if (!!cert !== !!key)
    throw new ApiError('BadRequest', 'etcd TLS: a client certificate and its key go together (give both or neither)');
  const options: IOptions = {
    hosts: endpoints,
    // One attempt may not take the whole deadline: a call queued on a member that was just killed
    // is cut short and retried on another one (etcd3 retries deadline and unavailable errors).
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + attemptTimeoutMs }),
    dialTimeout: attemptTimeoutMs,
    faultHandling: {
      // No per-member circuit breaker: etcd3's default one, tripped by the failures of an election,
      // refused every call to the live members for 5 s after it. An attempt that fails is tried on
      // another member at once; past that, withDeadline retries with a pause until the deadline.
      host: () => noop,
      global: retry(handleWhen(isRecoverableError), { maxAttempts: endpoints.length }),
    },
    grpcOptions: {
      // Reconnect to a restarted member within a second, and notice a silent (stopped) one.
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': 5000,
      'grpc.keepalive_permit_without_calls': 1,
      // A list is one range (no paging yet): let it exceed gRPC's default 4 MiB answer.
      'grpc.max_receive_message_length': 256 * 2 ** 20,
    },
  };
  // With a CA (and maybe a client pair) the channel is TLS; https:// without a CA uses the system roots.
  if (ca || cert) options.credentials = { rootCertificate: ca as Buffer, certChain: cert, privateKey: key };
  return new Etcd3(options);
}

/** A failure that another try may not meet: no leader yet, a member gone, an attempt cut short. */
export function isTransient(e: unknown): boolean {
  if (isApiError(e)) return false;
  if (e instanceof Error && isRecoverableError(e)) return true;
  return /leader changed|no leader|request timed out|too many requests|circuit breaker/i.test(
    (e as Error)?.message ?? '',
  );
}

/**
 * Runs `fn` within `ms`, again after a short pause while it fails for a transient reason (an
 * election, a member killed); past `ms` the call fails with reason Timeout (its RPCs are cut by
 * their own deadlines). A Timeout on a write means its outcome is unknown, as with any
 * distributed store; `fn` must be safe to run again (EtcdTxn keeps its identity across tries).
 */
export async function withDeadline<T>(
  what: string,
  endpoints: string[],
  ms: number,
  fn: (deadline: number) => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + ms;
  let timer: NodeJS.Timeout | undefined;
  let expired = false;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      expired = true;
      reject(timeoutError(what, endpoints, ms));
    }, ms);
  });
  const attempt = async (): Promise<T> => {
    for (let pause = 50; ; pause = Math.min(pause * 2, 400)) {
      try {
        return await fn(deadline);
      } catch (e) {
        if (expired || !isTransient(e) || Date.now() + pause >= deadline) throw etcdError(e, what, endpoints, ms);
        await new Promise((r) => setTimeout(r, pause));
      }
    }
  };
  try {
    return await Promise.race([attempt(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function timeoutError(what: string, endpoints: string[], ms: number): ApiError {
  return new ApiError(
    'Timeout',
    `etcd store: ${what} did not complete within ${ms} ms (endpoints ${endpoints.join(', ')}); ` +
      'the cluster may be electing a leader or have lost its quorum; retry',
  );
}

/** etcd and gRPC failures as ApiErrors with a reason a caller can act on; ApiErrors pass through. */
export function etcdError(e: unknown, what: string, endpoints: string[], ms: number): Error {
  if (isApiError(e)) return e;
  const msg = (e as Error)?.message ?? String(e);
  if (/too many operations in txn|request is too large/i.test(msg))
    return new ApiError(
      'BadRequest',
      `etcd store: ${what} refused by etcd (${msg}): one transaction holds every object it writes and the ` +
        'compares of every key it read; raise --max-txn-ops and --max-request-bytes on every member (docs/store.md)',
    );
  if (e instanceof GRPCDeadlineExceededError || /request timed out|DEADLINE_EXCEEDED/i.test(msg))
    return timeoutError(what, endpoints, ms);
  if (e instanceof GRPCUnavailableError || /no leader|UNAVAILABLE|ECONNREFUSED|connect|circuit breaker/i.test(msg))
    return new ApiError(
      'Unavailable',
      `etcd store: ${what} failed: no member answered (endpoints ${endpoints.join(', ')}): ${msg}`,
    );
  return new ApiError('InternalError', `etcd store: ${what} failed: ${msg}`);
}
