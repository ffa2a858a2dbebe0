import type { TotpConfirmed, TotpDisableInput, TotpEnrollment, TotpStatus } from '@signalbox/contracts';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, apiUrl } from '../../api/client';
import { sessionKeys } from '../../api/session';
import { userKeys } from './api';

const base = (userId: number) => `/users/${userId}/2fas/totp`;
export const totpKeys = { status: (userId: number) => ['users', userId, 'totp'] as const };

/** The address of a set-up's QR code (a PNG the server draws; the browser sends the session cookie). */
export const totpQrUrl = (userId: number, totpId: number) => apiUrl(`${base(userId)}/${totpId}/qr`);

/** The user's TOTP, or null when there is none (fetched while the dialog is open). */
export const useTotpStatus = (userId: number, enabled: boolean) =>
  useQuery({
    queryKey: totpKeys.status(userId),
    enabled,
    retry: false,
    queryFn: async () => {
      try {
        return await api<TotpStatus>(base(userId));
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      }
    },
  });

/** After TOTP changes: the status, the signed-in user's `totp` and the users list. */
function useRefresh(userId: number) {
  const client = useQueryClient();
  return () => {
    void client.invalidateQueries({ queryKey: totpKeys.status(userId) });
    void client.invalidateQueries({ queryKey: sessionKeys.user });
    void client.invalidateQueries({ queryKey: userKeys.all });
  };
}

export const useStartTotp = (userId: number) =>
  useMutation({ mutationFn: () => api<TotpEnrollment>(base(userId), { method: 'POST' }) });

export function useConfirmTotp(userId: number) {
  const refresh = useRefresh(userId);
  return useMutation({
    mutationFn: ({ totpId, passcode }: { totpId: number; passcode: string }) =>
      api<TotpConfirmed>(`${base(userId)}/${totpId}/confirm`, { method: 'POST', body: { passcode } }),
    onSuccess: refresh,
  });
}

/** Turns TOTP off: one's own with a code or the password; an administrator resets someone else's with no body. */
export function useDisableTotp(userId: number) {
  const refresh = useRefresh(userId);
  return useMutation({
    mutationFn: ({ totpId, proof }: { totpId: number; proof?: TotpDisableInput }) =>
      api(`${base(userId)}/${totpId}`, { method: 'DELETE', body: proof ?? {} }),
    onSuccess: refresh,
  });
}

/** The Users page's reset: the user's TOTP is named by the user object's `totp.id`. */
export function useResetTotp() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ userId, totpId }: { userId: number; totpId: number }) =>
      api(`${base(userId)}/${totpId}`, { method: 'DELETE', body: {} }),
    onSuccess: () => void client.invalidateQueries({ queryKey: userKeys.all }),
  });
}
