import { z } from 'zod';
import { optionalId, requiredString } from './common';
import { issue } from './errors';
import { requiredRefId } from './keys';

export const repositoryTypes = ['local', 'git', 'file', 'ssh', 'http', 'https'] as const;
export type RepositoryType = (typeof repositoryTypes)[number];

/** The git transports a repository type fetches through (git's GIT_ALLOW_PROTOCOL names). */
export type GitTransport = 'file' | 'git' | 'ssh' | 'http' | 'https';
export const transportOf = (type: RepositoryType): GitTransport => (type === 'local' ? 'file' : type);

const schemes = ['git', 'file', 'ssh', 'http', 'https'] as const;

/** Whitespace, C0/C1 control characters and DEL: never part of a URL or a branch git should be given. */
const unsafeChar = /[\s\p{Cc}]/u;
/** git's `<transport>::<address>` form runs a remote helper (ext:: runs any command, fd:: uses descriptors). */
const helperPrefix = /^[A-Za-z][A-Za-z0-9+.-]*::/;
/** A host name or an IPv4 address; never empty, never starting with "-" (ssh would read it as an option). */
const hostName = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
const ipv6 = /^\[[0-9A-Fa-f:.]+\]$/;
/** What may stand before "@" (RFC 3986 userinfo, ":" only in a scheme URL), never starting with "-". */
const userInfo = /^[A-Za-z0-9._~%!$&'()*+,;=][A-Za-z0-9._~%!$&'()*+,;=:-]*$/;
const scpUser = /^[A-Za-z0-9._~%!$&'()*+,;=][A-Za-z0-9._~%!$&'()*+,;=-]*$/;

const isHost = (host: string) => hostName.test(host) || ipv6.test(host);

/** `[user[:password]@]host[:port]` of a scheme URL; `file://` may leave it empty. */
function authorityOk(authority: string, scheme: string): boolean {
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at) : null;
  const hostPort = at >= 0 ? authority.slice(at + 1) : authority;
  if (userinfo !== null && !userInfo.test(userinfo)) return false;
  if (hostPort === '') return scheme === 'file' && userinfo === null;
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d{1,5}))?$/.exec(hostPort);
  return !!match && isHost(match[1] ?? '');
}

/**
 * The repository type follows the URL: '/' starts a local path; a scheme git, file, ssh, http or https gives
 * that type; the scp-like form `[user@]host:path` means ssh. Anything git could read as an option or as another
 * transport is invalid (null): a `<transport>::` prefix, a host or user starting with "-", whitespace or control
 * characters, a scheme other than those five, and a bare word (git would take it as a path relative to its
 * working directory).
 */
export function repositoryType(url: string): RepositoryType | null {
  const text = url.trim();
  if (text === '' || unsafeChar.test(text) || text.startsWith('-') || helperPrefix.test(text)) return null;
  if (text.startsWith('/')) return 'local';
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/.exec(text);
  if (scheme) {
    const [, word = '', authority = '', rest = ''] = scheme;
    const name = word.toLowerCase();
    if (!(schemes as readonly string[]).includes(name)) return null;
    if (!authorityOk(authority, name)) return null;
    if (name === 'file' && !rest.startsWith('/')) return null;
    return name as RepositoryType;
  }
  // scp-like: git takes it for ssh only when a ":" comes before any "/".
  const scp = /^(?:([^@/:]+)@)?(\[[^\]/]*\]|[^@/:[\]]+):(.*)$/.exec(text);
  if (!scp) return null;
  const [, user, host = '', path = ''] = scp;
  if (user !== undefined && !scpUser.test(user)) return null;
  if (!isHost(host) || path === '' || path.startsWith('-')) return null;
  return 'ssh';
}

/** The same rule for a value read back from storage: it must also be exactly what a save would have kept. */
export const isUsableRepositoryUrl = (url: string) => url === url.trim() && repositoryType(url) !== null;

export const branchMessages = { incorrect: issue('incorrect_branch') } as const;

/**
 * git's ref-name rules for a branch, roughly (git check-ref-format): no leading "-", no whitespace or control
 * characters, none of ~ ^ : ? * [ \, no "..", "@{", "//", no part starting with "." or ending with ".lock", no
 * leading or trailing "/", no trailing ".", and not "@" alone.
 */
export function isBranchName(name: string): boolean {
  if (name === '' || name === '@' || name.length > 255) return false;
  if (name.startsWith('-') || name.startsWith('/') || name.endsWith('/') || name.endsWith('.')) return false;
  if (unsafeChar.test(name) || /[~^:?*[\\]/.test(name)) return false;
  if (name.includes('..') || name.includes('@{') || name.includes('//')) return false;
  return name.split('/').every((part) => !part.startsWith('.') && !part.endsWith('.lock'));
}

/**
 * An optional branch field: trimmed, bounded, empty or a valid branch name. Empty (or null/absent) becomes ''.
 * Used by the repository form; template and task branch fields take the same rule.
 */
export const optionalBranch = () =>
  z
    .string()
    .trim()
    .max(255)
    .nullish()
    .transform((v) => v ?? '')
    .refine((v) => v === '' || isBranchName(v), branchMessages.incorrect);

/** A repository as the API answers it. */
export const repositorySchema = z.strictObject({
  id: z.int(),
  name: z.string(),
  project_id: z.int(),
  git_url: z.string(),
  git_branch: z.string().describe('Empty for a local repository, which is used in place.'),
  ssh_key_id: z.int().nullable().describe('The access key git fetches with.'),
});
export type Repository = z.infer<typeof repositorySchema>;

export const repositoryInput = z
  .object({
    id: optionalId(),
    project_id: optionalId(),
    name: requiredString(255),
    git_url: requiredString(2048).refine((url) => repositoryType(url) !== null, issue('incorrect_url')),
    git_branch: optionalBranch(),
    ssh_key_id: requiredRefId(),
  })
  .superRefine((input, ctx) => {
    if (repositoryType(input.git_url) !== 'local' && input.git_branch === '')
      ctx.addIssue({ code: 'custom', message: issue('required'), path: ['git_branch'] });
  })
  // A local repository is used in place: a branch means nothing there.
  .transform((input) => (repositoryType(input.git_url) === 'local' ? { ...input, git_branch: '' } : input));
export type RepositoryInput = z.output<typeof repositoryInput>;
