import type { EvaluationSpec } from './evaluation.js';
import type { EventFields } from './event.js';
import type { AgentSessionSchemaStatus } from './generated/agentsession.js';
import type { EvaluationSchemaSpec } from './generated/evaluation.js';
import type { EventSchema } from './generated/event.js';
import type { NodeSchemaStatus } from './generated/node.js';
import type { NotificationSchemaSpec, NotificationSchemaStatus } from './generated/notification.js';
import type {
  NotificationChannelSchemaSpec,
  NotificationChannelSchemaStatus,
} from './generated/notificationchannel.js';
import type { PipelineSchemaSpec, PipelineSchemaStatus } from './generated/pipeline.js';
import type { SessionPolicySchemaStatus } from './generated/sessionpolicy.js';
import type { SilenceSchemaStatus } from './generated/silence.js';
import type { NodeStatus } from './node.js';
import type { SilenceStatus } from './notification.js';
import type { NotificationChannelSpec } from './notification-channel.js';
import type { NotificationChannelStatus, NotificationSpec, NotificationStatus } from './outbox.js';
import type { PipelineSpec, PipelineStatus } from './pipeline.js';
import type { AgentSessionStatus } from './session.js';
import type { SessionPolicyStatus } from './session-policy.js';

type Primitive = string | number | boolean | bigint | symbol | null | undefined;
/** Keys of every member of a union (keyof a union is only the keys they share). */
type AllKeys<T> = T extends unknown ? keyof T : never;
type ValueAt<T, K extends PropertyKey> = T extends unknown ? (K extends keyof T ? T[K] : never) : never;
/** An object the schema leaves open ({ [k: string]: unknown }): anything below it conforms. */
type Open<T> = string extends keyof T ? (unknown extends T[string & keyof T] ? true : false) : false;
type Objects<T> = Exclude<NonNullable<T>, Primitive | readonly unknown[]>;
type Elements<T> = Extract<NonNullable<T>, readonly unknown[]>[number];

/** The paths (`.a.b[]`) of fields present on one side only; never when both have the same fields. */
export type FieldDrift<T, S, P extends string = ''> = [Objects<S>] extends [never]
  ? [Elements<S>] extends [never]
    ? never
    : FieldDrift<Elements<T>, Elements<S>, `${P}[]`>
  : Open<Objects<S>> extends true
    ? never
    : OneSided<Objects<T>, Objects<S>, P> | Shared<Objects<T>, Objects<S>, P> | ElementDrift<T, S, P>;
type Paths<T, P extends string> = AllKeys<T> extends infer K ? (K extends string ? `${P}.${K}` : never) : never;
type OneSided<T, S, P extends string> =
  | `${Exclude<Paths<T, P>, Paths<S, P>>} (not in CRD)`
  | `${Exclude<Paths<S, P>, Paths<T, P>>} (not in type)`;
type SharedKeys<T, S> = AllKeys<T> & AllKeys<S> & string;
type Shared<T, S, P extends string> = {
  [K in SharedKeys<T, S>]: FieldDrift<ValueAt<T, K>, ValueAt<S, K>, `${P}.${K}`>;
}[SharedKeys<T, S>];
type ElementDrift<T, S, P extends string> = [Elements<T>] extends [never]
  ? never
  : FieldDrift<Elements<T>, Elements<S>, `${P}[]`>;

/** true when every T is an S; otherwise the type shows what does not conform. */
export type Conforms<T, S> = [T] extends [S] ? true : { type: T; doesNotConformTo: S };
type Ok<_ extends true> = true;
type NoDrift<_ extends never> = true;

export type SchemaChecks = [
  Ok<Conforms<AgentSessionStatus, AgentSessionSchemaStatus>>,
  NoDrift<FieldDrift<AgentSessionStatus, AgentSessionSchemaStatus, 'AgentSession.status'>>,
  Ok<Conforms<EvaluationSpec, EvaluationSchemaSpec>>,
  NoDrift<FieldDrift<EvaluationSpec, EvaluationSchemaSpec, 'Evaluation.spec'>>,
  Ok<Conforms<EventFields, EventSchema>>,
  NoDrift<FieldDrift<EventFields, EventSchema, 'Event'>>,
  Ok<Conforms<NodeStatus, NodeSchemaStatus>>,
  NoDrift<FieldDrift<NodeStatus, NodeSchemaStatus, 'Node.status'>>,
  Ok<Conforms<NotificationSpec, NotificationSchemaSpec>>,
  NoDrift<FieldDrift<NotificationSpec, NotificationSchemaSpec, 'Notification.spec'>>,
  Ok<Conforms<NotificationStatus, NotificationSchemaStatus>>,
  NoDrift<FieldDrift<NotificationStatus, NotificationSchemaStatus, 'Notification.status'>>,
  Ok<Conforms<NotificationChannelSpec, NotificationChannelSchemaSpec>>,
  NoDrift<FieldDrift<NotificationChannelSpec, NotificationChannelSchemaSpec, 'NotificationChannel.spec'>>,
  Ok<Conforms<NotificationChannelStatus, NotificationChannelSchemaStatus>>,
  NoDrift<FieldDrift<NotificationChannelStatus, NotificationChannelSchemaStatus, 'NotificationChannel.status'>>,
  Ok<Conforms<PipelineSpec, PipelineSchemaSpec>>,
  NoDrift<FieldDrift<PipelineSpec, PipelineSchemaSpec, 'Pipeline.spec'>>,
  Ok<Conforms<PipelineStatus, PipelineSchemaStatus>>,
  NoDrift<FieldDrift<PipelineStatus, PipelineSchemaStatus, 'Pipeline.status'>>,
  Ok<Conforms<SessionPolicyStatus, SessionPolicySchemaStatus>>,
  NoDrift<FieldDrift<SessionPolicyStatus, SessionPolicySchemaStatus, 'SessionPolicy.status'>>,
  Ok<Conforms<SilenceStatus, SilenceSchemaStatus>>,
  NoDrift<FieldDrift<SilenceStatus, SilenceSchemaStatus, 'Silence.status'>>,
];
