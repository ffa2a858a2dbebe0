import { describe, expect, it } from 'vitest';
import { quietRun } from './quiet-run.mjs';

/** The set-up steps of `npm start` print one line each, and their output only when they fail. */
describe('quietRun', () => {
  const capture = () => {
    const chunks: string[] = [];
    return { write: (chunk: string) => void chunks.push(chunk), text: () => chunks.join('') };
  };

  it('prints one progress line, not the output, of a step that succeeds', () => {
    const out = capture();
    quietRun('for i in $(seq 1 100); do echo "build line $i"; echo "warning $i" >&2; done', {
      cwd: process.cwd(),
      note: 'building the web console',
      write: out.write,
    });
    expect(out.text()).toMatch(/^\[bootstrap\] building the web console… done \(\d+\.\d s\)\n$/);
  });

  it('shows the whole output of a step that fails, and throws naming the command', () => {
    const out = capture();
    expect(() =>
      quietRun('echo "compiling"; echo "error TS2322: broken" >&2; exit 3', {
        cwd: process.cwd(),
        note: 'building the server',
        write: out.write,
      }),
    ).toThrow(/echo "compiling".* failed \(exit code 3\)/);
    expect(out.text()).toContain('[bootstrap] building the server… failed:\n');
    expect(out.text()).toContain('compiling\nerror TS2322: broken\n');
  });
});
