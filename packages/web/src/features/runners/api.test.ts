import { describe, expect, it } from 'vitest';
import { registerCommands, sandboxView, timeAgo } from './api';

describe('runner page helpers', () => {
  it('says how long ago a heartbeat was', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(timeAgo('2026-01-01T11:58:00Z', 'en', now)).toBe('2 minutes ago');
    expect(timeAgo('2026-01-01T11:59:55Z', 'en', now)).toBe('5 seconds ago');
    expect(timeAgo('2026-01-01T09:00:00Z', 'en', now)).toBe('3 hours ago');
    expect(timeAgo('2025-12-29T12:00:00Z', 'en', now)).toBe('3 days ago');
    expect(timeAgo('2026-01-01T11:58:00Z', 'de', now)).toBe('vor 2 Minuten');
    expect(timeAgo('not a time', 'en', now)).toBe('');
  });

  it('writes the register and start commands, the token in the environment, naming the project of a project runner', () => {
    expect(registerCommands('https://ci.example.test', 'abc', { projectId: null })).toBe(
      'SIGNALBOX_RUNNER_REGISTRATION_TOKEN=abc npx signalbox runner register --url https://ci.example.test\nnpx signalbox runner start',
    );
    expect(registerCommands('http://localhost:3000', 'tok', { projectId: 7 }).split('\n')[0]).toBe(
      'SIGNALBOX_RUNNER_REGISTRATION_TOKEN=tok npx signalbox runner register --url http://localhost:3000 --project 7',
    );
  });

  it('keeps a token starting with a dash from reading as an option', () => {
    const [register] = registerCommands('https://ci.example.test', '-Abc_9', { projectId: null }).split('\n');
    expect(register).toBe(
      "SIGNALBOX_RUNNER_REGISTRATION_TOKEN='-Abc_9' npx signalbox runner register --url https://ci.example.test",
    );
    expect(register).not.toContain('--registration-token');
  });

  it('puts the name and tags in the command, quoted for the shell', () => {
    const [register] = registerCommands('https://ci.example.test', 't', {
      projectId: 3,
      name: " build box's $(id) ",
      tags: ['linux', 'eu west', ' ', '-x'],
    }).split('\n');
    expect(register).toBe(
      "SIGNALBOX_RUNNER_REGISTRATION_TOKEN=t npx signalbox runner register --url https://ci.example.test --name 'build box'\\''s $(id)' --tag linux --tag 'eu west' --tag '-x' --project 3",
    );
  });

  it('writes the container commands, the runner folder in a volume', () => {
    const [register, start] = registerCommands('https://ci.example.test', 'tok', {
      projectId: null,
      name: 'box',
      install: 'container',
    }).split('\n');
    expect(register).toBe(
      'docker run --rm -v signalbox-runner:/data -e SIGNALBOX_RUNNER_DIR=/data/runner -e SIGNALBOX_RUNNER_REGISTRATION_TOKEN=tok signalbox node packages/server/bin/signalbox.mjs runner register --url https://ci.example.test --name box',
    );
    expect(start).toBe(
      'docker run -d --name signalbox-runner --restart unless-stopped --stop-timeout 600 -v signalbox-runner:/data -e SIGNALBOX_RUNNER_DIR=/data/runner signalbox node packages/server/bin/signalbox.mjs runner start',
    );
  });

  it('shows a sandbox that is off as a warning with its reason, refused as an error, unknown as plain', () => {
    expect(sandboxView({ mode: 'bwrap', reason: null })).toMatchObject({ color: 'success' });
    expect(sandboxView({ mode: 'off', reason: 'bwrap is not installed' })).toEqual({
      label: 'runners.sandboxOff',
      color: 'warning',
      help: 'runners.sandboxOffHelp',
      reason: 'bwrap is not installed',
    });
    expect(sandboxView({ mode: 'off' })).toMatchObject({
      color: 'warning',
      help: 'runners.sandboxOffBySetting',
    });
    expect(sandboxView({ mode: 'refused', reason: 'no user namespaces' })).toMatchObject({ color: 'error' });
    expect(sandboxView(null)).toMatchObject({ color: 'default', label: 'runners.sandboxUnknown' });
  });
});
