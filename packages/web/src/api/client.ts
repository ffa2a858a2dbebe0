import type { ErrorBody } from '@signalbox/contracts';

/** An HTTP error carrying the server's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body?: ErrorBody & Record<string, unknown>,
  ) {
    super(message);
  }
}

/** The app's base path (Vite's `base`, "/" by default) without the trailing slash; the API lives under it. */
export const baseUrl = (import.meta.env?.BASE_URL ?? '/').replace(/\/$/, '');
export const apiUrl = (path: string) => `${baseUrl}/api${path}`;

type Options = { method?: string; body?: unknown; raw?: boolean; signal?: AbortSignal };

/** The one fetch wrapper: JSON in and out, errors become ApiError with the server's text. */
export async function api<T>(path: string, options: Options = {}): Promise<T> {
  const { method = 'GET', body, raw, signal } = options;
  const headers: Record<string, string> = { accept: 'application/json' };
  let payload: BodyInit | undefined;
  if (body !== undefined) {
    if (raw) {
      payload = body as BodyInit;
      headers['content-type'] = 'application/json';
    } else {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
  }
  let response: Response;
  try {
    response = await fetch(apiUrl(path), {
      method,
      headers,
      body: payload,
      credentials: 'same-origin',
      signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, (err as Error).message || 'Network error');
  }
  if (!response.ok) {
    let parsed: (ErrorBody & Record<string, unknown>) | undefined;
    try {
      parsed = await response.json();
    } catch {
      parsed = undefined;
    }
    const message =
      typeof parsed?.error === 'string' && parsed.error
        ? parsed.error
        : `${response.status} ${response.statusText}`.trim();
    throw new ApiError(response.status, message, parsed);
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  if (!text) return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    return text as T;
  }
}

/** GET a text body (downloads). */
export async function apiText(path: string): Promise<string> {
  const response = await fetch(apiUrl(path), { credentials: 'same-origin' });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`.trim();
    try {
      const body = (await response.json()) as ErrorBody;
      if (body?.error) message = body.error;
    } catch {}
    throw new ApiError(response.status, message);
  }
  return response.text();
}

/** Saves text as a file in the browser. */
export function saveFile(name: string, text: string, type = 'application/json') {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
