import { type App, type AppInfo, appDefaults, apps, appsNeedingPlaybook } from '@signalbox/contracts';
import { useQuery } from '@tanstack/react-query';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { api } from '../../api/client';

/** The server's app registry (GET /api/apps), highest priority first. It changes only with the server's settings. */
export const useApps = () =>
  useQuery({ queryKey: ['apps'] as const, queryFn: () => api<AppInfo[]>('/apps'), staleTime: 5 * 60_000 });

const isApp = (id: string): id is App => (apps as readonly string[]).includes(id);

/**
 * The name an app shows: the title the server's settings give it, or, while it keeps its default title (or
 * before the registry has loaded), that name in the console's language.
 */
export function appLabel(t: TFunction, id: string, registry?: readonly AppInfo[]): string {
  const info = registry?.find((a) => a.id === id);
  if (info && isApp(id) && info.title !== appDefaults[id].title) return info.title;
  return t(`tpl.apps.${id}`, { defaultValue: info?.title ?? id });
}

/** appLabel over the loaded registry. */
export function useAppLabel() {
  const { t } = useTranslation();
  const registry = useApps().data;
  return (id: string) => appLabel(t, id, registry);
}

/** Whether the server reports the binary of a template's app ('' is Ansible) missing (false until it has loaded). */
export const appMissing = (registry: readonly AppInfo[] | undefined, app: string) =>
  registry?.find((a) => a.id === (app || 'ansible'))?.installed === false;

/** The apps a new template may use: the active ones, in the registry's order (none until it has loaded). */
export const activeApps = (registry: readonly AppInfo[] | undefined): App[] =>
  (registry ?? []).filter((a) => a.active).map((a) => a.id);

/** The catalogue key of what a template's `playbook` field is for its app: a playbook, a script or a folder. */
export const playbookLabelKey = (app: string) =>
  app === 'ansible' || !app
    ? 'tpl.playbook'
    : appsNeedingPlaybook.includes(app)
      ? 'tpl.script'
      : 'tpl.subdirectory';
