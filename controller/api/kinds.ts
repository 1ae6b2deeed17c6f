/**
 * The built-in kinds' specs and statuses (the CRDs in crds/ are the schema), one module per kind;
 * re-exported here so one import reaches them all.
 */
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
