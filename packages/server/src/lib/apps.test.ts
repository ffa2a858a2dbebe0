import { appDefaults, apps } from '@signalbox/contracts';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config';
import { appList } from './apps';

const appsOf = (value: string, name = 'SIGNALBOX_APPS') => loadConfig({ [name]: value }).apps;

describe('SIGNALBOX_APPS: the app registry', () => {
  it('defaults to every app, active, with its binary', () => {
    const registry = loadConfig({}).apps;
    expect(Object.keys(registry).sort()).toEqual([...apps].sort());
    for (const id of apps) expect(registry[id]).toEqual({ ...appDefaults[id], active: true });
    expect(registry.python.path).toBe('python3');
    expect(registry.powershell).toMatchObject({ path: 'pwsh', args: ['-NoProfile', '-NonInteractive'] });
    expect(registry.terragrunt.path).toBe('terragrunt');
    expect(registry.ansible.path).toBe('ansible-playbook');
    expect(appList(registry).map((a) => a.id)).toEqual([
      'ansible',
      'terraform',
      'terragrunt',
      'tofu',
      'bash',
      'powershell',
      'python',
      'pulumi',
    ]);
  });

  it('lays each app’s settings over its defaults, the other fields kept', () => {
    const registry = appsOf(
      JSON.stringify({
        python: { path: '/usr/bin/python3.11', args: ['-X', 'utf8'], active: true, title: 'Python 3.11' },
        pulumi: { active: false },
        bash: { priority: 2000, icon: 'mdi-console', color: '#123456', dark_color: '#abcdef' },
        tofu: { title: '' },
      }),
    );
    expect(registry.python).toEqual({
      ...appDefaults.python,
      path: '/usr/bin/python3.11',
      args: ['-X', 'utf8'],
      title: 'Python 3.11',
    });
    expect(registry.pulumi).toEqual({ ...appDefaults.pulumi, active: false });
    expect(registry.bash).toMatchObject({ priority: 2000, icon: 'mdi-console', color: '#123456' });
    // An empty title keeps the default: the console always has a name to show.
    expect(registry.tofu.title).toBe('OpenTofu');
    expect(registry.terraform).toEqual(appDefaults.terraform);
    expect(appList(registry)[0]?.id).toBe('bash');
  });

  it('reads the peer’s SEMAPHORE_APPS; SIGNALBOX_APPS wins when both are set', () => {
    expect(appsOf('{"python":{"active":false}}', 'SEMAPHORE_APPS').python.active).toBe(false);
    const both = loadConfig({
      SEMAPHORE_APPS: '{"python":{"active":false}}',
      SIGNALBOX_APPS: '{"python":{"path":"/opt/py/bin/python3"}}',
    }).apps.python;
    expect(both).toMatchObject({ active: true, path: '/opt/py/bin/python3' });
  });

  it('a "__proto__" key changes nothing', () => {
    const registry = appsOf('{"__proto__":{"active":false,"path":"/tmp/evil"}}');
    for (const id of apps) expect(registry[id]).toEqual(appDefaults[id]);
    expect(({} as Record<string, unknown>).path).toBeUndefined();
  });

  it('refuses a bad value with a message naming the variable and the field', () => {
    for (const [value, message] of [
      ['not json', 'SIGNALBOX_APPS: must be valid JSON'],
      ['[]', 'SIGNALBOX_APPS: must be a JSON object of app id to settings'],
      [
        '{"ruby":{}}',
        'SIGNALBOX_APPS: ruby: unknown app "ruby" (the apps are ansible, terraform, tofu, bash',
      ],
      ['{"python":true}', 'SIGNALBOX_APPS: python: must be an object'],
      ['{"python":{"activ":true}}', 'SIGNALBOX_APPS: python: Unrecognized key: "activ"'],
      ['{"python":{"active":"yes"}}', 'SIGNALBOX_APPS: python.active: must be true or false'],
      ['{"python":{"priority":1.5}}', 'SIGNALBOX_APPS: python.priority: must be an integer'],
      ['{"python":{"path":""}}', 'SIGNALBOX_APPS: python.path: must not be empty'],
      ['{"python":{"path":"-c"}}', 'SIGNALBOX_APPS: python.path: must be an absolute path or a command name'],
      ['{"python":{"path":"bin/python3"}}', 'SIGNALBOX_APPS: python.path: must be an absolute path'],
      ['{"python":{"path":"/usr/bin/py\\nthon"}}', 'SIGNALBOX_APPS: python.path: must not contain control'],
      ['{"python":{"args":"-X utf8"}}', 'SIGNALBOX_APPS: python.args: must be a list of strings'],
      ['{"python":{"args":[1]}}', 'SIGNALBOX_APPS: python.args.0: must be a string'],
      ['{"python":{"title":5}}', 'SIGNALBOX_APPS: python.title: must be a string'],
    ]) {
      expect(() => appsOf(value as string), value).toThrow(ConfigError);
      expect(() => appsOf(value as string), value).toThrow(message);
    }
  });
});
