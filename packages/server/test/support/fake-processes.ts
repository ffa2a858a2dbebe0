import type { ProcessAdapter, ProcessSpec } from '../../src/tasks/sandbox/process';

/** A process adapter that records every spec and exits 0 without running anything. */
export function fakeProcesses(): ProcessAdapter & { specs: ProcessSpec[] } {
  const specs: ProcessSpec[] = [];
  return {
    specs,
    run(spec) {
      specs.push(spec);
      return { pid: undefined, wait: async () => ({ code: 0, signal: null }), kill() {} };
    },
    async capture(spec) {
      specs.push(spec);
      return { code: 0, signal: null, stdout: '', stderr: '' };
    },
  };
}
