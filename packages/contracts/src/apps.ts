import { z } from 'zod';
import { type App, apps } from './tasks';

/**
 * What the server knows of one app (the peer's `apps.<id>` settings): how it shows in the console (title, icon,
 * colours, priority: higher first), whether templates may use it (active), and how it runs (path: the binary,
 * args: options put before everything else on its command line). Every field can be set in the server's
 * configuration (SIGNALBOX_APPS); these are the defaults.
 */
export type AppSettings = {
  active: boolean;
  priority: number;
  title: string;
  icon: string;
  color: string;
  dark_color: string;
  path: string;
  args: string[];
};

const app = (
  title: string,
  icon: string,
  priority: number,
  path: string,
  args: string[] = [],
): AppSettings => ({ active: true, priority, title, icon, color: '', dark_color: '', path, args });

/** Every app's defaults (the peer's titles, icons and priorities; the binary each runs). */
export const appDefaults: Readonly<Record<App, AppSettings>> = {
  ansible: app('Ansible', 'mdi-ansible', 1000, 'ansible-playbook'),
  terraform: app('Terraform', 'mdi-terraform', 900, 'terraform'),
  terragrunt: app('Terragrunt', 'mdi-layers-triple', 850, 'terragrunt'),
  tofu: app('OpenTofu', 'mdi-web', 800, 'tofu'),
  bash: app('Bash', 'mdi-bash', 700, 'bash'),
  powershell: app('PowerShell', 'mdi-powershell', 600, 'pwsh', ['-NoProfile', '-NonInteractive']),
  python: app('Python', 'mdi-language-python', 500, 'python3'),
  pulumi: app('Pulumi', 'mdi-pulumi', 400, 'pulumi'),
};

/** One app as `GET /api/apps` answers it: the display settings, and for administrators how it runs. */
export const appInfoSchema = z.strictObject({
  id: z.enum(apps),
  title: z.string(),
  icon: z.string().describe('A Material Design Icons name (mdi-…).'),
  color: z.string(),
  dark_color: z.string(),
  active: z
    .boolean()
    .describe('Templates may use the app (inactive apps are refused when a template is saved).'),
  priority: z.number().int().describe('Apps are listed highest first.'),
  installed: z
    .boolean()
    .describe(
      "The app's binary is found on this server (at its configured path, or on the server's PATH); a task of a template using it fails here when it is not (a runner may still have it).",
    ),
  path: z.string().optional().describe('The binary the app runs (administrators only).'),
  args: z
    .array(z.string())
    .optional()
    .describe('Options put first on the binary’s command line (administrators only).'),
});
export type AppInfo = z.infer<typeof appInfoSchema>;
