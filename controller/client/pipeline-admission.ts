/**
 * Admission of a Pipeline: the graph's rules (api/pipeline.ts: unique names, known dependencies,
 * no cycle, session names that fit), then each phase's session as the pipeline would create it,
 * validated as an AgentSession — the AgentSession CRD's schema and its admission — so a template
 * that could never make a valid session is refused at apply, with the template's field named.
 */
import type { KindInfo } from '../api/crds.js';
import { type Pipeline, phaseSession, pipelineSpecErrors, RESERVED_PHASE_LABELS } from '../api/pipeline.js';
import type { Resource } from '../api/types.js';
import { type FieldError, formatPath, type PathPart, validateObject } from '../api/validate.js';

/** Admission of one object of a kind (client/admission.ts's, passed in: it dispatches here). */
type Admit = (o: Resource, kind: KindInfo) => FieldError[];

/** Where a field of the phase's session comes from in the pipeline. */
function templatePath(phase: number, p: PathPart[]): PathPart[] {
  const at: PathPart[] = ['spec', 'phases', phase];
  if (p[0] === 'metadata' && p[1] === 'labels') return [...at, 'template', 'labels', ...p.slice(2)];
  if (p[0] === 'metadata') return [...at, 'name'];
  if (p[0] === 'spec') return [...at, 'template', ...p.slice(1)];
  return [...at, 'template'];
}

/** `sessionKind`: the AgentSession kind of the registry the pipeline is applied with. */
export function pipelineErrors(o: Resource, sessionKind: KindInfo | undefined, admit: Admit): FieldError[] {
  const p = o as Pipeline; // validated here: the manifest decoded as a Pipeline
  const spec = p.spec ?? { phases: [] };
  const errs = pipelineSpecErrors(p.metadata.name, spec);
  spec.phases.forEach((phase, i) => {
    for (const key of Object.keys(phase.template.labels ?? {}))
      if (RESERVED_PHASE_LABELS.has(key))
        errs.push({
          path: ['spec', 'phases', i, 'template', 'labels', key],
          message: 'is set by the pipeline on its sessions',
          atKey: true,
        });
  });
  if (errs.length) return errs;
  const kind = sessionKind;
  if (!kind) return [];
  spec.phases.forEach((phase, i) => {
    const session = phaseSession(p, phase) as Resource;
    const schema = validateObject(structuredClone(session), kind);
    for (const e of schema.length ? schema : admit(session, kind)) {
      const moved = templatePath(i, e.path);
      errs.push({ ...e, path: moved, message: e.message.replace(formatPath(e.path), formatPath(moved)) });
    }
  });
  return errs;
}
