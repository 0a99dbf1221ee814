import {
  Anchor,
  Button,
  Card,
  Code,
  Group,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { useI18n } from '../../i18n/i18n';
import { Failed, Loading } from '../../layout/Loading';
import type { Schemas } from '../api';
import { CursorMore } from '../shared/ListControls';
import { useUser } from '../users/queries';
import { useAuditLog } from './queries';

type Entry = Schemas['AuditEntryResponse'];

/** The filters `GET /admin/audit` takes; empty ones are left out of the query. */
interface AuditFilters {
  action: string;
  actor_id: string;
  target_type: string;
  target_id: string;
}

const NO_FILTERS: AuditFilters = { action: '', actor_id: '', target_type: '', target_id: '' };

/**
 * The audit log (owner guard): who changed access, limits, plans or money, from what to what, and
 * when; newest first, a page at a time, narrowed by the route's filters.
 */
export function AuditPage() {
  const { t } = useI18n();
  const [draft, setDraft] = useState<AuditFilters>(NO_FILTERS);
  const [filters, setFilters] = useState<AuditFilters>(NO_FILTERS);
  const query = Object.fromEntries(
    Object.entries(filters).filter(([, value]) => value !== ''),
  ) as Partial<AuditFilters>;
  const list = useAuditLog(query);

  function apply(event: FormEvent) {
    event.preventDefault();
    setFilters({
      action: draft.action.trim(),
      actor_id: draft.actor_id.trim(),
      target_type: draft.target_type.trim(),
      target_id: draft.target_id.trim(),
    });
  }

  const entries = list.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <Stack>
      <Title order={2}>{t('console.audit.title')}</Title>
      <Card withBorder component="section" aria-labelledby="audit-filters">
        <Title order={3} size="h4" id="audit-filters" mb="xs">
          {t('console.audit.filters')}
        </Title>
        <form onSubmit={apply}>
          <Group align="flex-end">
            <TextInput
              label={t('console.audit.action')}
              placeholder="plan.changed"
              value={draft.action}
              onChange={(event) => setDraft({ ...draft, action: event.currentTarget.value })}
            />
            <TextInput
              label={t('console.audit.actorId')}
              value={draft.actor_id}
              onChange={(event) => setDraft({ ...draft, actor_id: event.currentTarget.value })}
            />
            <TextInput
              label={t('console.audit.targetType')}
              placeholder="plan"
              value={draft.target_type}
              onChange={(event) => setDraft({ ...draft, target_type: event.currentTarget.value })}
            />
            <TextInput
              label={t('console.audit.targetId')}
              value={draft.target_id}
              onChange={(event) => setDraft({ ...draft, target_id: event.currentTarget.value })}
            />
            <Button type="submit">{t('console.audit.apply')}</Button>
            <Button
              variant="default"
              onClick={() => {
                setDraft(NO_FILTERS);
                setFilters(NO_FILTERS);
              }}
            >
              {t('console.audit.clear')}
            </Button>
          </Group>
        </form>
      </Card>
      <Card withBorder component="section" aria-labelledby="audit-entries">
        <Title order={3} size="h4" id="audit-entries" mb="xs">
          {t('console.audit.entries')}
        </Title>
        {list.isPending && <Loading />}
        {list.isError && <Failed error={list.error} retry={() => void list.refetch()} />}
        {list.data && entries.length === 0 && <Text>{t('console.audit.none')}</Text>}
        {entries.length > 0 && (
          <Table.ScrollContainer minWidth={760}>
            <Table verticalSpacing="xs">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{t('console.audit.when')}</Table.Th>
                  <Table.Th>{t('console.audit.who')}</Table.Th>
                  <Table.Th>{t('console.audit.action')}</Table.Th>
                  <Table.Th>{t('console.audit.target')}</Table.Th>
                  <Table.Th>{t('console.audit.change')}</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {entries.map((entry) => (
                  <AuditRow
                    key={entry.id}
                    entry={entry}
                    onActor={(id) => {
                      const next = { ...filters, actor_id: id };
                      setDraft(next);
                      setFilters(next);
                    }}
                  />
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
        <CursorMore list={list} />
      </Card>
    </Stack>
  );
}

function AuditRow({ entry, onActor }: { entry: Entry; onActor: (id: string) => void }) {
  const { t, language } = useI18n();
  const when = new Intl.DateTimeFormat(language === 'ru' ? 'ru-RU' : 'en-GB', {
    dateStyle: 'medium',
    timeStyle: 'medium',
    timeZone: 'UTC',
  }).format(new Date(entry.created_at));
  return (
    <Table.Tr>
      <Table.Td>{`${when} UTC`}</Table.Td>
      <Table.Td>
        {entry.actor_id ? (
          <ActorName id={entry.actor_id} onPick={onActor} />
        ) : (
          t('console.audit.system')
        )}
      </Table.Td>
      <Table.Td>
        <Code>{entry.action}</Code>
      </Table.Td>
      <Table.Td>
        <Text size="sm">{`${entry.target_type} ${entry.target_id ?? ''}`.trim()}</Text>
      </Table.Td>
      <Table.Td>
        <Change before={entry.before} after={entry.after} />
      </Table.Td>
    </Table.Tr>
  );
}

/**
 * The acting account's username (GET /admin/users/{id}), its id while unknown; choosing it narrows
 * the log to that account.
 */
function ActorName({ id, onPick }: { id: string; onPick: (id: string) => void }) {
  const { t } = useI18n();
  // The account's own cache entry, as its page uses: a change there renames it here too.
  const user = useUser(id, { staleTime: 60_000 });
  const name = user.data?.username ?? user.data?.tg_id ?? null;
  const shown = name === null ? id : `${name}${user.data?.role ? ` (${user.data.role})` : ''}`;
  return (
    <Anchor
      component="button"
      type="button"
      size="sm"
      title={t('console.audit.onlyThis', { name: shown })}
      onClick={() => onPick(id)}
    >
      {shown}
    </Anchor>
  );
}

/** Each field that an entry records, as `field: before → after`. */
function Change({ before, after }: { before: Entry['before']; after: Entry['after'] }) {
  const fields = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])];
  const shown = (value: unknown) => (value === undefined ? '—' : JSON.stringify(value));
  return (
    <Stack gap={2}>
      {fields.map((field) => {
        const was = before ? shown(before[field]) : null;
        const now = after ? shown(after[field]) : '—';
        return (
          <Text size="sm" key={field}>
            {was === null || was === now ? `${field}: ${now}` : `${field}: ${was} → ${now}`}
          </Text>
        );
      })}
    </Stack>
  );
}
