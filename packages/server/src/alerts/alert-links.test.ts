import { describe, expect, it } from 'vitest';
import { testDialects } from '../../test/support/dialects';
import { createHarness } from '../../test/support/harness';

const WARNING = 'alert links are relative because SIGNALBOX_WEB_ROOT is not set';

describe.each(testDialects())('alert links at start on $name', (dialect) => {
  const warningsAtStart = async (overrides: Parameters<typeof createHarness>[1]) => {
    const h = await createHarness(dialect, overrides);
    try {
      return h.logLines.filter((line) => line.includes(WARNING)).map((line) => JSON.parse(line));
    } finally {
      await h.close();
    }
  };

  it('warns once, naming the channels, when alerts are on and no web root is set', async () => {
    const warnings = await warningsAtStart({
      webRoot: '',
      slackAlert: true,
      slackUrl: 'http://127.0.0.1:9/hook',
      emailAlert: true,
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, channels: ['email', 'slack'] });
  });

  it('says nothing with a web root, or with no alert channel on', async () => {
    expect(
      await warningsAtStart({
        webRoot: 'https://ci.example.test/',
        slackAlert: true,
        slackUrl: 'http://127.0.0.1:9/hook',
      }),
    ).toEqual([]);
    // A channel switched on without its address sends nothing.
    expect(await warningsAtStart({ webRoot: '', slackAlert: true, slackUrl: '' })).toEqual([]);
  });
});
