import { Card, Table, Text, Title } from '@mantine/core';
import { type ReactNode, useId } from 'react';
import { useI18n } from '../i18n/i18n';

/** One column of a `DataTable`: its header and what a row shows in it. */
export interface Column<Row> {
  header: string;
  cell: (row: Row) => ReactNode;
  /** Long unbroken text (an address, a wallet): broken anywhere rather than widening the table. */
  breakAll?: boolean;
}

/**
 * A table of rows that scrolls sideways on a narrow screen instead of widening the page; "none"
 * in words when there are no rows.
 */
export function DataTable<Row>({
  columns,
  rows,
  rowKey,
  minWidth = 420,
}: {
  columns: Column<Row>[];
  rows: readonly Row[];
  rowKey: (row: Row) => string;
  minWidth?: number;
}) {
  const { t } = useI18n();
  if (rows.length === 0) return <Text>{t('common.none')}</Text>;
  return (
    <Table.ScrollContainer minWidth={minWidth}>
      <Table>
        <Table.Thead>
          <Table.Tr>
            {columns.map((column) => (
              <Table.Th key={column.header}>{column.header}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row) => (
            <Table.Tr key={rowKey(row)}>
              {columns.map((column) => (
                <Table.Td
                  key={column.header}
                  style={column.breakAll ? { wordBreak: 'break-all' } : undefined}
                >
                  {column.cell(row)}
                </Table.Td>
              ))}
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

/** A titled section of a page (a card), named by its title for assistive technology. */
export function Section({ title, children }: { title: string; children: ReactNode }) {
  const id = useId();
  return (
    <Card withBorder component="section" aria-labelledby={id}>
      <Title order={2} size="h3" id={id} mb="xs">
        {title}
      </Title>
      {children}
    </Card>
  );
}
