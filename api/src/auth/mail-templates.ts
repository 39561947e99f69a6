/**
 * The auth service's mails, each as a subject, a plain-text body and a small readable HTML body.
 * Every interpolated value is HTML-escaped; links are shown in full in both parts.
 */
import type { OutgoingMail } from '../kit/mail.ts';

export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

interface Layout {
  to: string;
  subject: string;
  greeting: string;
  paragraphs: string[];
  action?: { label: string; url: string };
  footer: string;
}

function actionHtml(action: { label: string; url: string }): string {
  return `<p style="margin:24px 0;"><a href="${escapeHtml(action.url)}" style="background:#1f2328;color:#ffffff;text-decoration:none;padding:10px 18px;border-radius:6px;font-weight:600;display:inline-block;">${escapeHtml(action.label)}</a></p>
    <p style="margin:0 0 16px;font-size:13px;color:#57606a;">If the button does not work, open this link:<br><a href="${escapeHtml(action.url)}" style="color:#0969da;word-break:break-all;">${escapeHtml(action.url)}</a></p>`;
}

function render(m: Layout): OutgoingMail {
  const text = [
    m.greeting,
    '',
    ...m.paragraphs.flatMap((p) => [p, '']),
    ...(m.action ? [`${m.action.label}: ${m.action.url}`, ''] : []),
    m.footer,
    '',
    '— Emporia',
    '',
  ].join('\n');
  const html = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(m.subject)}</title></head>
<body style="margin:0;padding:24px;background:#f6f7f9;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#1f2328;">
  <div style="max-width:520px;margin:0 auto;background:#ffffff;border:1px solid #e3e6ea;border-radius:8px;padding:28px;">
    <p style="margin:0 0 16px;font-size:16px;">${escapeHtml(m.greeting)}</p>
    ${m.paragraphs.map((p) => `<p style="margin:0 0 16px;font-size:15px;line-height:1.5;">${escapeHtml(p)}</p>`).join('\n    ')}
    ${m.action ? actionHtml(m.action) : ''}
    <p style="margin:16px 0 0;font-size:13px;color:#57606a;">${escapeHtml(m.footer)}</p>
  </div>
  <p style="text-align:center;font-size:12px;color:#8c959f;margin-top:16px;">Emporia</p>
</body>
</html>`;
  return { to: m.to, subject: m.subject, text, html };
}

const hello = (name: string | null | undefined) => (name ? `Hello ${name},` : 'Hello,');

export function verificationMail(p: { to: string; name?: string | null; url: string }): OutgoingMail {
  return render({
    to: p.to,
    subject: 'Verify your email address',
    greeting: hello(p.name),
    paragraphs: [`Please confirm that ${p.to} is your email address.`, 'The link is valid for one hour and can be used once.'],
    action: { label: 'Verify email', url: p.url },
    footer: 'If you did not create an account, you can ignore this mail.',
  });
}

export function resetPasswordMail(p: { to: string; name?: string | null; url: string }): OutgoingMail {
  return render({
    to: p.to,
    subject: 'Reset your password',
    greeting: hello(p.name),
    paragraphs: ['Someone asked to reset the password of your account.', 'The link is valid for one hour and can be used once.'],
    action: { label: 'Choose a new password', url: p.url },
    footer: 'If you did not ask for this, you can ignore this mail: your password stays as it is.',
  });
}

export function changeEmailMail(p: { to: string; name?: string | null; oldEmail: string; url: string }): OutgoingMail {
  return render({
    to: p.to,
    subject: 'Confirm your new email address',
    greeting: hello(p.name),
    paragraphs: [
      `You asked to change the email address of your account from ${p.oldEmail} to ${p.to}.`,
      'Confirm the change with the link below; it is valid for one hour and can be used once.',
    ],
    action: { label: 'Confirm new email', url: p.url },
    footer: 'If you did not ask for this, ignore this mail and nothing changes.',
  });
}

export function deleteAccountMail(p: { to: string; name?: string | null; url: string }): OutgoingMail {
  return render({
    to: p.to,
    subject: 'Confirm the deletion of your account',
    greeting: hello(p.name),
    paragraphs: [
      'You asked to delete your account. This removes your sessions, your sign-in methods and your memberships, and cannot be undone.',
      'Confirm with the link below while signed in; it is valid for 24 hours and can be used once.',
    ],
    action: { label: 'Delete my account', url: p.url },
    footer: 'If you did not ask for this, ignore this mail and change your password.',
  });
}

export function invitationMail(p: {
  to: string;
  inviterName: string;
  inviterEmail: string;
  organizationName: string;
  role: string;
  invitationId: string;
  url: string;
}): OutgoingMail {
  return render({
    to: p.to,
    subject: `${p.inviterName || p.inviterEmail} invited you to ${p.organizationName}`,
    greeting: 'Hello,',
    paragraphs: [
      `${p.inviterName || p.inviterEmail} (${p.inviterEmail}) invited you to join ${p.organizationName} as ${p.role}.`,
      `Sign in with this email address to accept or decline. The invitation (id ${p.invitationId}) is valid for 48 hours.`,
    ],
    action: { label: 'View invitation', url: p.url },
    footer: 'If you do not know this organization, you can ignore this mail.',
  });
}

export function twoFactorOtpMail(p: { to: string; name?: string | null; code: string; minutes: number }): OutgoingMail {
  return render({
    to: p.to,
    subject: 'Your sign-in code',
    greeting: hello(p.name),
    paragraphs: [`Your sign-in code is ${p.code}.`, `It is valid for ${p.minutes} minutes and can be used once.`],
    footer: 'If you did not try to sign in, change your password: someone else knows it.',
  });
}
