import type { CodedMessage, OptionsSource, SurveyOption, TemplateSurveyVar } from '@signalbox/contracts';
import { choiceTypes } from '@signalbox/contracts';
import { JSONPath } from 'jsonpath-plus';
import type { Deps } from '../../deps';
import { keySecretOf } from '../../lib/key-sources';
import { entriesOf, findOptionListRow } from '../option-lists';
import { type AllowPrivate, type Fetched, fetchJson } from './http-options';
import { iniInventoryNames, yamlInventoryNames } from './inventory-names';

/** The options of one choice variable: what it offers now, or why none could be had. */
export type ResolvedOptions = { options: SurveyOption[] } | { error: CodedMessage };

/** What resolving reads: the database, the secret box (an http source's key) and the configuration. */
export type SurveyOptionsDeps = Pick<Deps, 'db' | 'box' | 'config'>;

/** The most options one variable offers (a source yielding more offers the first ones). */
export const MAX_OPTIONS = 1000;
/** How long an http source's document (or its failure) is reused for the same URL and key. */
export const HTTP_CACHE_MS = 30_000;
const HTTP_CACHE_ENTRIES = 500;

type Where = { projectId: number; templateId: number };

/**
 * The options of every choice variable (enum, multiselect) of a template's survey, by variable name: its fixed
 * `values` (name shown, value answered), or what its `options_source` yields now. Called when the run dialog
 * asks for the survey's schema and again when a run is submitted, so a value no longer offered is refused.
 */
export async function resolveSurveyOptions(
  deps: SurveyOptionsDeps,
  where: Where,
  vars: TemplateSurveyVar[],
): Promise<Map<string, ResolvedOptions>> {
  const out = new Map<string, ResolvedOptions>();
  for (const v of vars) {
    if (!choiceTypes.includes(v.type)) continue;
    if (v.options_source) {
      out.set(v.name, await fromSource(deps, where, v.options_source));
      continue;
    }
    out.set(v.name, { options: v.values.map((item) => ({ value: item.value, label: item.name })) });
  }
  return out;
}

/** Options of distinct values, at most MAX_OPTIONS, in order. */
function distinct(options: SurveyOption[]): { options: SurveyOption[] } {
  const seen = new Set<string>();
  const out: SurveyOption[] = [];
  for (const option of options) {
    if (seen.has(option.value)) continue;
    seen.add(option.value);
    out.push(option);
    if (out.length >= MAX_OPTIONS) break;
  }
  return { options: out };
}

/** A value as an option's text: strings as they are, numbers and booleans written, objects as JSON; none for null. */
function text(value: unknown): string | null {
  if (value == null) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value);
}

const same = (name: string): SurveyOption => ({ value: name, label: name });

async function fromSource(
  deps: SurveyOptionsDeps,
  where: Where,
  source: OptionsSource,
): Promise<ResolvedOptions> {
  try {
    switch (source.type) {
      case 'inventory_hosts':
      case 'inventory_groups':
        return await fromInventory(deps, where.projectId, source.inventory_id, source.type);
      case 'option_list': {
        const row = await findOptionListRow(deps.db, where.projectId, source.option_list_id);
        if (!row)
          return {
            error: { code: 'not_in_project', params: { what: 'option_list', id: source.option_list_id } },
          };
        return distinct(entriesOf(row).map((e) => ({ value: e.value, label: e.name })));
      }
      case 'task_outputs':
        return await fromTaskOutputs(deps, where, source.output);
      case 'http':
        return await fromHttp(deps, where.projectId, source);
    }
  } catch {
    // Nothing a source holds may fail the schema or the run with a 500: the variable offers nothing, saying so.
    return { error: { code: 'request_failed' } };
  }
}

async function fromInventory(
  deps: SurveyOptionsDeps,
  projectId: number,
  inventoryId: number,
  kind: 'inventory_hosts' | 'inventory_groups',
): Promise<ResolvedOptions> {
  const row = await deps.db
    .selectFrom('inventory')
    .select(['name', 'type', 'inventory'])
    .where('id', '=', inventoryId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  if (!row) return { error: { code: 'not_in_project', params: { what: 'inventory', id: inventoryId } } };
  let names: { hosts: string[]; groups: string[] };
  try {
    if (row.type === 'static') names = iniInventoryNames(row.inventory);
    else if (row.type === 'static-yaml') names = yamlInventoryNames(row.inventory);
    else return { error: { code: 'options_inventory_type', params: { type: row.type } } };
  } catch {
    return { error: { code: 'options_inventory_invalid', params: { name: row.name } } };
  }
  return distinct((kind === 'inventory_hosts' ? names.hosts : names.groups).map(same));
}

/** The named output of the template's last successful task: a list gives one option per item, a value one. */
async function fromTaskOutputs(
  deps: SurveyOptionsDeps,
  where: Where,
  name: string,
): Promise<ResolvedOptions> {
  const last = await deps.db
    .selectFrom('task')
    .select('outputs')
    .where('project_id', '=', where.projectId)
    .where('template_id', '=', where.templateId)
    .where('status', '=', 'success')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  let outputs: unknown = null;
  try {
    outputs = last?.outputs ? JSON.parse(last.outputs) : null;
  } catch {
    outputs = null;
  }
  if (!outputs || typeof outputs !== 'object' || !Object.hasOwn(outputs, name)) return { options: [] };
  const value = (outputs as Record<string, unknown>)[name];
  const items = Array.isArray(value) ? value : [value];
  return distinct(items.flatMap((item) => (text(item) === null ? [] : [same(text(item) as string)])));
}

// Documents fetched lately, by allowance, key and URL: a dialog opened and a run submitted right after reuse it.
const httpCache = new Map<string, { until: number; fetched: Fetched }>();

/** Forgets every cached document (tests, and a setting changed at run time). */
export function clearSurveyHttpCache() {
  httpCache.clear();
}

async function fromHttp(
  deps: SurveyOptionsDeps,
  projectId: number,
  source: Extract<OptionsSource, { type: 'http' }>,
): Promise<ResolvedOptions> {
  let authorization: string | null = null;
  if (source.key_id != null) {
    const key = await deps.db
      .selectFrom('access_key')
      .select(['name', 'type', 'secret', 'source_storage_type', 'source_storage_key'])
      .where('id', '=', source.key_id)
      .where('project_id', '=', projectId)
      .where('owner', '=', '')
      .executeTakeFirst();
    if (key?.type !== 'login_password') return { error: { code: 'options_http_key' } };
    try {
      const secret = await keySecretOf(deps, key);
      authorization = `Basic ${Buffer.from(`${secret.login}:${secret.password}`).toString('base64')}`;
    } catch {
      // The reason names the key's variable or file: not for the survey's users.
      return { error: { code: 'options_http_key' } };
    }
  }
  const allow: AllowPrivate = deps.config.surveyHttpAllowPrivate;
  const cacheKey = JSON.stringify([allow, source.key_id, source.url]);
  const now = Date.now();
  let cached = httpCache.get(cacheKey);
  if (!cached || cached.until <= now) {
    cached = { until: now + HTTP_CACHE_MS, fetched: await fetchJson(source.url, { allow, authorization }) };
    httpCache.delete(cacheKey);
    httpCache.set(cacheKey, cached);
    while (httpCache.size > HTTP_CACHE_ENTRIES) httpCache.delete(httpCache.keys().next().value as string);
  }
  if ('error' in cached.fetched) return cached.fetched;
  return optionsOf(cached.fetched.json, source);
}

/** A JSONPath relative to an item (`id`, `.id`, `[0]`, `$.id`) as an absolute one; '' is the item itself. */
const absolute = (path: string) =>
  path.startsWith('$') ? path : path.startsWith('.') || path.startsWith('[') ? `$${path}` : `$.${path}`;

/** Evaluates a JSONPath without running any script in it (filters and script expressions are refused). */
function select(path: string, json: unknown): unknown[] | { error: CodedMessage } {
  try {
    const found: unknown = JSONPath({ path, json: json as object, eval: false, wrap: true });
    return Array.isArray(found) ? found : [];
  } catch {
    return { error: { code: 'options_http_bad_path', params: { path } } };
  }
}

function optionsOf(json: unknown, source: Extract<OptionsSource, { type: 'http' }>): ResolvedOptions {
  const items = select(source.items_path || '$', json);
  if (!Array.isArray(items)) return items;
  const pick = (item: unknown, path: string): unknown[] | { error: CodedMessage } =>
    path ? select(absolute(path), item) : [item];
  const options: SurveyOption[] = [];
  for (const item of items) {
    if (options.length >= MAX_OPTIONS * 2) break;
    const values = pick(item, source.value_path);
    if (!Array.isArray(values)) return values;
    const value = text(values[0]);
    if (value === null) continue;
    let label = value;
    if (source.label_path) {
      const labels = pick(item, source.label_path);
      if (!Array.isArray(labels)) return labels;
      label = text(labels[0]) ?? value;
    }
    options.push({ value, label });
  }
  return distinct(options);
}
