/** The fields a schedule is named by in audit events. */
export type Described = { type: string; cron_format: string; run_at: string | null; name: string };

/** How a schedule is named in audit events: its cron, or the time it runs once. */
export const describeSchedule = (s: Described, tplName: string) =>
  `Schedule ${s.name ? `${s.name} ` : ''}(${s.type === 'run_at' ? `once at ${s.run_at}` : s.cron_format}) of template ${tplName}`;
