/**
 * API errors shaped like Kubernetes `Status` reasons so callers can branch on `reason`
 * (Conflict → re-read and retry; NotFound/Invalid → don't retry).
 */
export type ErrorReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'BadRequest'
  | 'Gone'
  | 'Timeout' // a store call past its deadline (e.g. etcd electing a leader)
  | 'Unavailable' // the store cannot be reached or refuses the connection
  | 'StoreLost' // the store's file changed under this process (truncated, replaced): nothing more is written; stop
  | 'InternalError';

export interface FieldCause {
  field: string; // JSON path, e.g. spec.maxDuration
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly reason: ErrorReason,
    message: string,
    readonly causes: FieldCause[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const isApiError = (e: unknown, reason?: ErrorReason): e is ApiError =>
  e instanceof ApiError && (reason === undefined || e.reason === reason);

/** One wording everywhere: `agentsession "x" not found in namespace "default"`. */
export const notFoundMessage = (kind: string, name: string, namespace?: string) =>
  `${kind.toLowerCase()} "${name}" not found${namespace ? ` in namespace "${namespace}"` : ''}`;
export const notFound = (kind: string, name: string, namespace?: string) =>
  new ApiError('NotFound', notFoundMessage(kind, name, namespace));
export const alreadyExists = (kind: string, name: string) =>
  new ApiError('AlreadyExists', `${kind.toLowerCase()} "${name}" already exists`);
export const conflict = (kind: string, name: string) =>
  new ApiError(
    'Conflict',
    `Operation cannot be fulfilled on ${kind.toLowerCase()} "${name}": the object has been modified; ` +
      'please apply your changes to the latest version and try again',
  );
