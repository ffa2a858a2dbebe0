export const digestFile: string;
export function webSourcesDigest(webDir?: string): string;
export function builtDigest(): string;
export function webBuildIsStale(): boolean;
