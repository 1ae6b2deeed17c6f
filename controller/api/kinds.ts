/**
 * The built-in kinds' specs and statuses (the CRDs in crds/ are the schema), one module per kind;
 * re-exported here so one import reaches them all, with the map from each kind's name to its type.
 */
import type { Agent } from './agent.js';
import type { Autopilot, Decision } from './autopilot.js';
import type { Evaluation } from './evaluation.js';
import type { EventObject } from './event.js';
import type { Node } from './node.js';
import type { NotificationPolicy, Silence } from './notification.js';
import type { Notification, NotificationChannel } from './outbox.js';
import type { Pipeline } from './pipeline.js';
import type { Project } from './project.js';
import type { AgentSession } from './session.js';
import type { SessionPolicy } from './session-policy.js';
import type { ObjectKey, Resource } from './types.js';

export type { Agent, AgentSpec, AgentStatus, EnvVar, PromptDelivery } from './agent.js';
export type * from './assessment.js';
export type {
  Autopilot,
  AutopilotSpec,
  AutopilotStatus,
  Decision,
  DecisionSpec,
  DecisionStatus,
  DecisionPhase,
  AutonomyLevel,
  AutopilotAction,
} from './autopilot.js';
export type * from './evaluation.js';
export type { EventObject, EventType } from './event.js';
export type { Node, NodeSpec, NodeStatus } from './node.js';
export type * from './notification.js';
export type * from './notification-channel.js';
export type { Project, ProjectSpec, ProjectStatus } from './project.js';
export type * from './session.js';
export type * from './session-policy.js';

/**
 * Each built-in kind's name → its object type (one entry per CRD in crds/), so the store, the
 * informers and the builder hand back `AgentSession` for 'AgentSession' — controller-runtime's typed
 * client and `For(&T{})` — and no caller casts what it read.
 */
export interface KindMap {
  Agent: Agent;
  AgentSession: AgentSession;
  Autopilot: Autopilot;
  Decision: Decision;
  Evaluation: Evaluation;
  Event: EventObject;
  Node: Node;
  Notification: Notification;
  NotificationChannel: NotificationChannel;
  NotificationPolicy: NotificationPolicy;
  Pipeline: Pipeline;
  Project: Project;
  SessionPolicy: SessionPolicy;
  Silence: Silence;
}

export type KindName = keyof KindMap;

/** Whether `o` is of kind `kind`, typed as that kind: for an object whose kind is chosen at run time. */
export function isKind<K extends KindName>(o: Resource, kind: K): o is KindMap[K] {
  return o.kind === kind;
}

/** `o`'s key (as api/types.ts keyOf), typed by its kind `kind`: the store reads it back as that kind's type. */
export function keyOfKind<K extends KindName>(kind: K, o: KindMap[K]): ObjectKey<K> {
  return { kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name };
}

/** The object type of kind `K`: its entry in KindMap, or a plain Resource for a kind named at run time. */
export type ObjectOf<K extends string> = K extends KindName ? KindMap[K] : Resource;
