/**
 * Creating a staff account from the console: moderators and support accounts (the owner's), and
 * partners (any staff). The new account's details are shown once it exists; its password is the
 * one just typed and is never shown back.
 */
import {
  Alert,
  Anchor,
  Button,
  Card,
  List,
  NativeSelect,
  NumberInput,
  Paper,
  Stack,
  TextInput,
  Title,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { useMe } from '../../api/hooks';
import { useI18n } from '../../i18n/i18n';
import { access } from '../access';
import { NewPasswordInput } from './accounts';
import { type StaffKind as Kind, type StaffUser, useCreateAccount } from './queries';

export function CreateStaff() {
  const { t, errorText } = useI18n();
  const me = useMe().data;
  const create = useCreateAccount();
  const kinds: Kind[] = me && access.owner(me) ? ['moderator', 'support', 'partner'] : ['partner'];
  const [kind, setKind] = useState<Kind>(kinds[0]);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [commission, setCommission] = useState<string | number>('');
  const [partnerCode, setPartnerCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<StaffUser | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setCreated(null);
    try {
      // The commission field is required: the form is not sent while it is empty.
      const user = await create.mutateAsync({
        kind,
        account: { username: username.trim(), password },
        partner: { commission: Number(commission), code: partnerCode.trim() },
      });
      setCreated(user);
      setUsername('');
      setPassword('');
      setPartnerCode('');
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card withBorder component="section" role="region" aria-labelledby="create-staff">
      <form onSubmit={(e) => void submit(e)}>
        <Stack gap="xs" maw={480}>
          <Title order={3} id="create-staff">
            {t('console.users.create')}
          </Title>
          <NativeSelect
            label={t('console.users.kind')}
            value={kind}
            onChange={(e) => setKind(e.currentTarget.value as Kind)}
            data={kinds.map((value) => ({ value, label: t(`console.users.role.${value}`) }))}
          />
          <TextInput
            label={t('console.users.newUsername')}
            description={t('console.users.usernameRule')}
            value={username}
            onChange={(e) => setUsername(e.currentTarget.value)}
            required
            maxLength={32}
            autoComplete="off"
          />
          <NewPasswordInput value={password} onChange={setPassword} />
          {kind === 'partner' && (
            <>
              <NumberInput
                label={t('console.users.commission')}
                value={commission}
                onChange={setCommission}
                min={0}
                max={100}
                decimalScale={2}
                required
              />
              <TextInput
                label={t('console.users.partnerCode')}
                description={t('console.users.partnerCodeRule')}
                value={partnerCode}
                onChange={(e) => setPartnerCode(e.currentTarget.value)}
                maxLength={32}
              />
            </>
          )}
          {error && (
            <Alert color="red" role="alert">
              {error}
            </Alert>
          )}
          <Button type="submit" loading={busy} w="fit-content">
            {t('console.users.createSubmit')}
          </Button>
        </Stack>
      </form>
      {created && (
        <Paper withBorder mt="md" p="md" component="section" aria-labelledby="created-account">
          <Title order={4} id="created-account" mb="xs">
            {t('console.users.created')}
          </Title>
          <List size="sm">
            <List.Item>{t('console.users.usernameIs', { name: created.username ?? '' })}</List.Item>
            <List.Item>
              {t('console.users.roleIs', {
                role: t(`console.users.role.${created.role ?? 'none'}`),
              })}
            </List.Item>
            <List.Item>{t('console.users.idIs', { id: created.id })}</List.Item>
            {created.partner_code && (
              <List.Item>
                {t('console.users.partnerCodeIs', { code: created.partner_code })}
              </List.Item>
            )}
            {created.commission_percent !== null && (
              <List.Item>
                {t('console.users.commissionIs', { percent: created.commission_percent })}
              </List.Item>
            )}
          </List>
          <Anchor component={Link} to={`/staff/users/${created.id}`} size="sm">
            {t('console.users.openAccount')}
          </Anchor>
        </Paper>
      )}
    </Card>
  );
}
