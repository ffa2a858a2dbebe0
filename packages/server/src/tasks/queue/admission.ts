/*
 * Queue admission without I/O: given the tasks that hold a slot and the limits that apply to a waiting task,
 * whether it may start now, and if not, why (the reason the API shows as status_detail).
 */

/** A task holding a slot; `runner` is the instance that claimed it (null: claimed before instance ids existed). */
export type Slot = {
  id: number;
  project_id: number;
  template_id: number;
  runner: string | null;
  /** The remote runner running it: it takes no slot of the instance. */
  remote_runner_id?: number | null;
};

/** A waiting task, in creation order. */
export type Candidate = { id: number; project_id: number; template_id: number };

/** The limits that apply to one candidate: this instance's cap, its project's cap (0: none), its template's rule. */
export type Limits = { server: number; project: number; allowParallel: boolean };

/** The slots taken while a queue pass walks the waiting tasks. */
export type Occupancy = {
  /** Slots this instance holds (the server cap guards one machine). */
  readonly total: number;
  /** Slots per project, on every instance. */
  readonly perProject: ReadonlyMap<number, number>;
  /** Per template: the task that holds it (running), or the earliest that waits for it. */
  readonly holderOfTemplate: ReadonlyMap<number, number>;
};

export type Admission = { admit: true } | { admit: false; reason: string };

const plural = (n: number) => `${n} running task${n === 1 ? '' : 's'}`;

/** The occupancy the slots make up; the server cap counts only this instance's. */
export function occupancy(slots: readonly Slot[], instanceId: string): Occupancy {
  const perProject = new Map<number, number>();
  const holderOfTemplate = new Map<number, number>();
  for (const s of slots) {
    perProject.set(s.project_id, (perProject.get(s.project_id) ?? 0) + 1);
    if (!holderOfTemplate.has(s.template_id)) holderOfTemplate.set(s.template_id, s.id);
  }
  const total = slots.filter((s) => s.runner === instanceId && !s.remote_runner_id).length;
  return { total, perProject, holderOfTemplate };
}

/** Whether the candidate may start now: the server cap first, then its project's, then its template's rule. */
export function admission(o: Occupancy, candidate: Candidate, limits: Limits): Admission {
  if (o.total >= limits.server)
    return { admit: false, reason: `Waiting: server limit of ${plural(limits.server)} reached` };
  if (limits.project > 0 && (o.perProject.get(candidate.project_id) ?? 0) >= limits.project)
    return { admit: false, reason: `Waiting: project limit of ${plural(limits.project)} reached` };
  if (!limits.allowParallel && o.holderOfTemplate.has(candidate.template_id))
    return {
      admit: false,
      reason: `Waiting: task #${o.holderOfTemplate.get(candidate.template_id)} of this template has not finished`,
    };
  return { admit: true };
}

/** The occupancy once the candidate started (on a remote runner: no slot of this instance). */
export function occupy(o: Occupancy, candidate: Candidate, remote = false): Occupancy {
  const perProject = new Map(o.perProject);
  perProject.set(candidate.project_id, (perProject.get(candidate.project_id) ?? 0) + 1);
  const holderOfTemplate = o.holderOfTemplate.has(candidate.template_id)
    ? o.holderOfTemplate
    : new Map(o.holderOfTemplate).set(candidate.template_id, candidate.id);
  return { total: o.total + (remote ? 0 : 1), perProject, holderOfTemplate };
}

/**
 * The occupancy once the candidate stays waiting: a template that does not allow parallel tasks keeps its later
 * tasks behind its earliest waiting one (creation order), even when another limit held that one back.
 */
export function holdBehind(o: Occupancy, candidate: Candidate, limits: Limits): Occupancy {
  if (limits.allowParallel || o.holderOfTemplate.has(candidate.template_id)) return o;
  return { ...o, holderOfTemplate: new Map(o.holderOfTemplate).set(candidate.template_id, candidate.id) };
}
