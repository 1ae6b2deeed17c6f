/**
 * One rule for every outbound endpoint that carries a secret — the store's traffic (etcd), an LLM
 * backend's API key, a notification channel's token: https://, or plain http:// only where the
 * traffic never leaves this host (127.0.0.0/8, ::1, localhost).
 */
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** Whether `hostname` (as URL.hostname gives it: IPv6 in brackets) is this host. */
export const isLoopbackHost = (hostname: string): boolean => LOOPBACK.test(hostname);

/** Why `url` may not carry a secret (plain http:// to another host), or undefined when it may. */
export function plaintextRefusal(url: URL): string | undefined {
  if (url.protocol !== 'http:' || isLoopbackHost(url.hostname)) return undefined;
  return `plaintext to ${url.host} is refused (only loopback may be plain http)`;
}
