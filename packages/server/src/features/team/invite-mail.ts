import type { InviteMailStatus } from '@signalbox/contracts';
import { failureReason, mailTransport } from '../../alerts/senders';
import type { Deps } from '../../deps';

/** What an invite of an e-mail address without an account tells the person invited. */
export type InviteMail = {
  to: string;
  projectName: string;
  role: string;
  inviter: string;
  token: string;
  expiresAt: string | null;
};

/**
 * The invite's e-mail (plain text, English like the alerts): who invited them into which project as what, how to
 * accept (sign in with this address; an administrator creates the account, or LDAP/OIDC does at the first
 * sign-in), and the token API clients accept with.
 */
export function inviteMessage(webRoot: string, mail: InviteMail) {
  const console = webRoot.replace(/\/+$/, '');
  const where = console ? `the Signalbox console at ${console}` : 'the Signalbox console';
  const lines = [
    `${mail.inviter} invited you to join the project "${mail.projectName}" on Signalbox as ${mail.role}.`,
    '',
    `To accept, sign in to ${where} with this e-mail address (${mail.to}): the invite waits for you there.`,
    'If you have no account yet, ask your Signalbox administrator for one with this address (or sign in',
    'through your organisation, LDAP or single sign-on, where the console offers it).',
    '',
    ...(mail.expiresAt ? [`The invite expires on ${new Date(mail.expiresAt).toUTCString()}.`, ''] : []),
    'API clients accept it, once signed in with this address, with POST /api/invites/accept and the token:',
    mail.token,
  ];
  return { subject: `Invitation to join project ${mail.projectName}`, text: `${lines.join('\n')}\n` };
}

/**
 * Sends the invite's e-mail through the server's SMTP settings, when e-mail is on (SIGNALBOX_EMAIL_ALERT), within
 * SIGNALBOX_ALERT_TIMEOUT. Says what became of it; a failure is logged with the address and the reason, never the
 * token.
 */
export async function sendInviteMail(
  deps: Pick<Deps, 'config' | 'log'>,
  mail: InviteMail,
): Promise<InviteMailStatus> {
  const { config } = deps;
  if (!config.emailAlert) return 'not_configured';
  const timeoutMs = config.alertTimeout * 1000;
  const { subject, text } = inviteMessage(config.webRoot, mail);
  let transport: Awaited<ReturnType<typeof mailTransport>> | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    transport = await mailTransport(config, timeoutMs);
    const sent = transport.sendMail({ from: config.emailSender, to: mail.to, subject, text });
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(Object.assign(new Error('timed out'), { name: 'TimeoutError' })),
        timeoutMs,
      );
    });
    await Promise.race([sent, late]);
    return 'sent';
  } catch (err) {
    deps.log.warn({ to: mail.to, reason: failureReason(err) }, 'invite e-mail not delivered');
    return 'failed';
  } finally {
    clearTimeout(timer);
    transport?.close();
  }
}
