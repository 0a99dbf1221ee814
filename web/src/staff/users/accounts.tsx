/** What the Users pages share: how an account is named, its blocked state, a new password. */
import { Badge, PasswordInput } from '@mantine/core';
import { useCallback } from 'react';
import { useI18n } from '../../i18n/i18n';
import type { StaffUser } from './queries';

/**
 * How the console names an account in lists, headings and confirmations: staff by username,
 * Telegram accounts by Telegram id, anonymous seed accounts by the start of their id.
 */
export function useAccountName(): (user: StaffUser) => string {
  const { t } = useI18n();
  return useCallback(
    (user) => {
      if (user.username) return user.username;
      if (user.tg_id !== null) return t('console.users.telegramName', { id: user.tg_id });
      return t('console.users.seedName', { id: user.id.slice(0, 8) });
    },
    [t],
  );
}

/** Blocked (since when) or active, in words and colour. */
export function BlockedBadge({ user }: { user: StaffUser }) {
  const { t, date } = useI18n();
  return user.blocked_at ? (
    <Badge color="red.9" variant="filled">
      {t('console.users.blockedSince', { date: date(user.blocked_at) })}
    </Badge>
  ) : (
    <Badge variant="default">{t('console.users.notBlocked')}</Badge>
  );
}

/** A staff account's new password, with the rule it must meet (the server checks it again). */
export function NewPasswordInput({
  value,
  onChange,
}: {
  value: string;
  onChange: (password: string) => void;
}) {
  const { t } = useI18n();
  return (
    <PasswordInput
      label={t('console.users.newPassword')}
      description={t('console.users.passwordRule')}
      value={value}
      onChange={(e) => onChange(e.currentTarget.value)}
      required
      maxLength={128}
      autoComplete="new-password"
    />
  );
}
