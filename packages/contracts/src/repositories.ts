import { z } from 'zod';
import { messages, optionalId, requiredString } from './common';
import { requiredRefId } from './keys';

export const repositoryTypes = ['local', 'git', 'file', 'ssh', 'http', 'https'] as const;
export type RepositoryType = (typeof repositoryTypes)[number];

const schemes = ['git', 'file', 'ssh', 'http', 'https'] as const;

/**
 * The repository type follows the URL (SPEC §4): '/' starts a local path; a scheme git, file, ssh, http or https
 * gives that type; no scheme (git@host:org/repo.git) means ssh; any other scheme is invalid (null).
 */
export function repositoryType(url: string): RepositoryType | null {
  const text = url.trim();
  if (text === '') return null;
  if (text.startsWith('/')) return 'local';
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(text);
  if (!match) return 'ssh';
  const scheme = match[1]!.toLowerCase();
  return (schemes as readonly string[]).includes(scheme) ? (scheme as RepositoryType) : null;
}

export type Repository = {
  id: number;
  name: string;
  project_id: number;
  git_url: string;
  git_branch: string;
  ssh_key_id: number | null;
};

export const repositoryInput = z
  .object({
    id: optionalId('Id'),
    project_id: optionalId('Project'),
    name: requiredString('Name', 255),
    git_url: requiredString('URL', 2048).refine((url) => repositoryType(url) !== null, messages.incorrectUrl),
    git_branch: z
      .string({ error: 'Branch must be a string' })
      .trim()
      .max(255, messages.tooLong('Branch', 255))
      .nullish()
      .transform((v) => v ?? ''),
    ssh_key_id: requiredRefId('Access key'),
  })
  .superRefine((input, ctx) => {
    if (repositoryType(input.git_url) !== 'local' && input.git_branch === '')
      ctx.addIssue({ code: 'custom', message: messages.required('Branch'), path: ['git_branch'] });
  })
  // A local repository is used in place: a branch means nothing there.
  .transform((input) => (repositoryType(input.git_url) === 'local' ? { ...input, git_branch: '' } : input));
export type RepositoryInput = z.output<typeof repositoryInput>;
