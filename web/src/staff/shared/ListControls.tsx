/**
 * The controls of a cursor-paged console list (useCursorList): a "More" button at its foot while
 * the service has another page, so a long list is read a page at a time and never loaded whole,
 * and a "Refresh" button, since money, withdrawals and tickets change on their own meanwhile;
 * `NoWrap` for a cell that must keep its width (a date, an amount, a badge).
 */
import { Box, Button, Group } from '@mantine/core';
import type { ReactNode } from 'react';
import { useI18n } from '../../i18n/i18n';

export function CursorMore({
  list,
}: {
  list: { hasNextPage: boolean; isFetchingNextPage: boolean; fetchNextPage: () => unknown };
}) {
  const { t } = useI18n();
  if (!list.hasNextPage) return null;
  return (
    <Group justify="center">
      <Button
        variant="default"
        loading={list.isFetchingNextPage}
        onClick={() => void list.fetchNextPage()}
      >
        {t('console.shared.more')}
      </Button>
    </Group>
  );
}

export function RefreshList({ list }: { list: { isRefetching: boolean; refetch: () => unknown } }) {
  const { t } = useI18n();
  return (
    <Button
      variant="default"
      size="xs"
      loading={list.isRefetching}
      onClick={() => void list.refetch()}
    >
      {t('console.shared.refresh')}
    </Button>
  );
}

/**
 * A table cell's content kept on one line and at its whole width: a table would otherwise shrink
 * a badge to an ellipsis.
 */
export function NoWrap({ children }: { children: ReactNode }) {
  return <Box style={{ whiteSpace: 'nowrap', minWidth: 'max-content' }}>{children}</Box>;
}
