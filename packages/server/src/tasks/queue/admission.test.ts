import { describe, expect, it } from 'vitest';
import {
  admission,
  type Candidate,
  holdBehind,
  type Limits,
  occupancy,
  occupy,
  type Slot,
} from './admission';

const open: Limits = { server: 10, project: 0, allowParallel: true };
const slot = (id: number, project_id: number, template_id: number, runner: string | null = 'me'): Slot => ({
  id,
  project_id,
  template_id,
  runner,
});
const candidate = (id: number, project_id: number, template_id: number): Candidate => ({
  id,
  project_id,
  template_id,
});

describe('queue admission', () => {
  it('admits a task when no limit is reached', () => {
    expect(admission(occupancy([], 'me'), candidate(1, 1, 1), open)).toEqual({ admit: true });
  });

  it("counts only this instance's slots against the server cap", () => {
    const o = occupancy([slot(1, 1, 1, 'me'), slot(2, 2, 2, 'other'), slot(3, 3, 3, null)], 'me');
    expect(o.total).toBe(1);
    expect(admission(o, candidate(9, 4, 4), { ...open, server: 2 })).toEqual({ admit: true });
    expect(admission(o, candidate(9, 4, 4), { ...open, server: 1 })).toEqual({
      admit: false,
      reason: 'Waiting: server limit of 1 running task reached',
    });
  });

  it("counts every instance's slots against a project cap, and 0 means no cap", () => {
    const o = occupancy([slot(1, 7, 1, 'me'), slot(2, 7, 2, 'other')], 'me');
    expect(admission(o, candidate(9, 7, 3), { ...open, project: 2 })).toEqual({
      admit: false,
      reason: 'Waiting: project limit of 2 running tasks reached',
    });
    expect(admission(o, candidate(9, 7, 3), { ...open, project: 3 })).toEqual({ admit: true });
    expect(admission(o, candidate(9, 7, 3), { ...open, project: 0 })).toEqual({ admit: true });
  });

  it('names the running task of a template that does not allow parallel tasks', () => {
    const o = occupancy([slot(4, 1, 5, 'other'), slot(6, 1, 5, 'me')], 'me');
    expect(admission(o, candidate(9, 1, 5), { ...open, allowParallel: false })).toEqual({
      admit: false,
      reason: 'Waiting: task #4 of this template has not finished',
    });
    expect(admission(o, candidate(9, 1, 5), open)).toEqual({ admit: true });
  });

  it('gives the server cap first, then the project cap, as the reason', () => {
    const o = occupancy([slot(1, 1, 1)], 'me');
    const all: Limits = { server: 1, project: 1, allowParallel: false };
    expect(admission(o, candidate(2, 1, 1), all)).toMatchObject({
      reason: expect.stringMatching(/^Waiting: server/),
    });
    expect(admission(o, candidate(2, 1, 1), { ...all, server: 5 })).toMatchObject({
      reason: expect.stringMatching(/^Waiting: project/),
    });
  });

  it('counts a started task in every limit without changing the occupancy it started from', () => {
    const before = occupancy([], 'me');
    const after = occupy(before, candidate(3, 1, 2));
    expect(before.total).toBe(0);
    expect(before.perProject.size).toBe(0);
    expect(after.total).toBe(1);
    expect(after.perProject.get(1)).toBe(1);
    expect(admission(after, candidate(4, 1, 2), { ...open, allowParallel: false })).toEqual({
      admit: false,
      reason: 'Waiting: task #3 of this template has not finished',
    });
  });

  it("keeps a template's later tasks behind its earliest waiting one", () => {
    const capped: Limits = { server: 1, project: 0, allowParallel: false };
    let o = occupancy([slot(1, 1, 1)], 'me');
    expect(admission(o, candidate(2, 1, 8), capped)).toMatchObject({ admit: false });
    o = holdBehind(o, candidate(2, 1, 8), capped);
    expect(admission(o, candidate(3, 1, 8), { ...capped, server: 5 })).toEqual({
      admit: false,
      reason: 'Waiting: task #2 of this template has not finished',
    });
    // The earliest stays the one named.
    expect(holdBehind(o, candidate(3, 1, 8), capped).holderOfTemplate.get(8)).toBe(2);
  });

  it('holds nothing back for a template that allows parallel tasks', () => {
    const o = occupancy([], 'me');
    expect(holdBehind(o, candidate(2, 1, 8), open)).toBe(o);
  });
});
