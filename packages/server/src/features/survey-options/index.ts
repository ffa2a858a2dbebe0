import type { CodedMessage, SurveyOption, TemplateSurveyVar } from '@signalbox/contracts';
import { choiceTypes } from '@signalbox/contracts';
import type { Deps } from '../../deps';

/** The options of one choice variable: what it offers now, or why none could be had. */
export type ResolvedOptions = { options: SurveyOption[] } | { error: CodedMessage };

/**
 * The options of every choice variable (enum, multiselect) of a template's survey, by variable name: its fixed
 * `values` (name shown, value answered), or what its `options_source` yields now. Called when the run dialog
 * asks for the survey's schema and again when a run is submitted, so a value no longer offered is refused.
 */
export async function resolveSurveyOptions(
  _deps: Pick<Deps, 'db'>,
  _where: { projectId: number; templateId: number },
  vars: TemplateSurveyVar[],
): Promise<Map<string, ResolvedOptions>> {
  const out = new Map<string, ResolvedOptions>();
  for (const v of vars) {
    if (!choiceTypes.includes(v.type)) continue;
    if (v.options_source) {
      out.set(v.name, { error: { code: 'internal' } });
      continue;
    }
    out.set(v.name, { options: v.values.map((item) => ({ value: item.value, label: item.name })) });
  }
  return out;
}
