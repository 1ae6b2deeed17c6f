/** Name and label validation (Kubernetes apimachinery rules). */

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Returns an error message, or undefined when valid. */
export function checkDns1123Label(v: string): string | undefined {
  if (v.length > 63) return 'must be no more than 63 characters';
  if (!DNS1123_LABEL.test(v))
    return (
      "must be a lowercase RFC 1123 label: lowercase letters, digits and '-', " +
      'starting and ending with a letter or digit'
    );
  return undefined;
}

export function checkDns1123Subdomain(v: string): string | undefined {
  if (v.length > 253) return 'must be no more than 253 characters';
  if (!DNS1123_SUBDOMAIN.test(v))
    return (
      "must be a lowercase RFC 1123 subdomain: lowercase letters, digits, '-' and '.', " +
      'starting and ending with a letter or digit'
    );
  return undefined;
}

/** Label and annotation keys: optional DNS-subdomain prefix + '/' + name (≤ 63). */
export function checkQualifiedName(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return "a qualified name must have at most one '/'";
  const [prefix, name] = parts.length === 2 ? parts : [undefined, parts[0]];
  if (prefix !== undefined) {
    const e = checkDns1123Subdomain(prefix);
    if (e) return `prefix ${e}`;
  }
  if (!name || name.length > 63 || !QUALIFIED_NAME_PART.test(name))
    return (
      "name part must be 63 characters or less, alphanumeric, '-', '_' or '.', " +
      'starting and ending with an alphanumeric character'
    );
  return undefined;
}

export function checkLabelValue(v: string): string | undefined {
  if (v.length > 63) return 'must be no more than 63 characters';
  if (!LABEL_VALUE.test(v))
    return "must be empty or alphanumeric, '-', '_' or '.', starting and ending with an alphanumeric character";
  return undefined;
}
