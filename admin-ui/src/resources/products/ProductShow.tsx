/**
 * A product: prices, benefits, images, checkout fields, and its checkout links with their public URLs
 * ("Copy checkout link" makes one when the product has none yet). Archive and unarchive from here.
 */
import {
  DataTable,
  EditButton,
  FunctionField,
  Labeled,
  ReferenceManyField,
  Show,
  TabbedShowLayout,
  TextField,
  TopToolbar,
  useDataProvider,
  useNotify,
  useRecordContext,
  useRefresh,
  useUpdate,
} from 'react-admin';
import { formatTrial } from './trial.tsx';
import { Box, Button, Chip, Stack, Typography } from '@mui/material';
import ArchiveIcon from '@mui/icons-material/Archive';
import UnarchiveIcon from '@mui/icons-material/Unarchive';
import LinkIcon from '@mui/icons-material/Link';
import { benefitTypeName } from '../../common/choices.ts';
import { CopyButton, copyText } from '../../common/CopyButton.tsx';
import { DateTimeField } from '../../common/money.tsx';
import { formatInterval, formatPrice, type Product } from './price.ts';

interface CheckoutLink {
  id: string;
  url: string;
  label: string | null;
  created_at: string;
}

const CopyCheckoutLinkButton = () => {
  const product = useRecordContext<Product>();
  const dataProvider = useDataProvider();
  const notify = useNotify();
  const refresh = useRefresh();
  if (!product) return null;
  const onClick = async () => {
    try {
      const { data } = await dataProvider.getList<CheckoutLink>('checkout-links', {
        filter: { product_id: product.id },
        pagination: { page: 1, perPage: 1 },
        sort: { field: 'created_at', order: 'DESC' },
      });
      let link = data[0];
      if (!link) link = (await dataProvider.create<CheckoutLink>('checkout-links', { data: { product_id: product.id } })).data as CheckoutLink;
      await copyText(link.url);
      notify(`Checkout link copied: ${link.url}`, { type: 'info' });
      refresh();
    } catch (err) {
      notify(err instanceof Error ? err.message : 'Could not make a checkout link', { type: 'error' });
    }
  };
  return (
    <Button size="small" startIcon={<LinkIcon />} onClick={() => void onClick()}>
      Copy checkout link
    </Button>
  );
};

const ArchiveButton = () => {
  const product = useRecordContext<Product>();
  const [update, { isPending }] = useUpdate();
  const notify = useNotify();
  if (!product) return null;
  const archived = product.is_archived;
  return (
    <Button
      size="small"
      disabled={isPending}
      startIcon={archived ? <UnarchiveIcon /> : <ArchiveIcon />}
      onClick={() =>
        update(
          'products',
          { id: product.id, data: { is_archived: !archived }, previousData: product },
          {
            mutationMode: 'pessimistic',
            onSuccess: () => notify(archived ? 'Product restored' : 'Product archived', { type: 'info' }),
            onError: (e) => notify((e as Error).message, { type: 'error' }),
          },
        )
      }
    >
      {archived ? 'Unarchive' : 'Archive'}
    </Button>
  );
};

const Actions = () => (
  <TopToolbar>
    <CopyCheckoutLinkButton />
    <ArchiveButton />
    <EditButton />
  </TopToolbar>
);

const Title = () => {
  const p = useRecordContext<Product>();
  return <>{p ? `Product: ${p.name}` : 'Product'}</>;
};

export const ProductShow = () => (
  <Show actions={<Actions />} title={<Title />}>
    <TabbedShowLayout>
      <TabbedShowLayout.Tab label="Overview">
        <TextField source="name" />
        <TextField source="description" emptyText="—" />
        <FunctionField<Product> label="Billing" render={(r) => formatInterval(r.recurring_interval)} />
        <FunctionField<Product> label="Free trial" render={(r) => formatTrial(r)} />
        <FunctionField<Product> label="Status" render={(r) => (r.is_archived ? 'Archived' : 'Active')} />
        <FunctionField<Product>
          label="Prices"
          render={(r) => (
            <Stack spacing={0.5}>
              {r.prices.map((p) => (
                <Typography key={p.id} variant="body2" sx={p.is_archived ? { color: 'text.secondary', textDecoration: 'line-through' } : undefined}>
                  {formatPrice(p)}
                  {p.is_archived ? ' (archived)' : ''}
                </Typography>
              ))}
            </Stack>
          )}
        />
        <FunctionField<Product>
          label="Benefits"
          render={(r) =>
            r.benefits.length ? (
              <Stack direction="row" spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
                {r.benefits.map((b) => (
                  <Chip key={b.id} label={`${b.description} · ${benefitTypeName(b.type)}`} size="small" />
                ))}
              </Stack>
            ) : (
              'None'
            )
          }
        />
        <FunctionField<Product>
          label="Checkout fields"
          render={(r) =>
            r.attached_custom_fields.length
              ? r.attached_custom_fields.map((f) => `${f.custom_field.name}${f.required ? ' (required)' : ''}`).join(', ')
              : 'None'
          }
        />
        <FunctionField<Product>
          label="Images"
          render={(r) =>
            r.medias.length ? (
              <Stack direction="row" spacing={1}>
                {r.medias.map((m) =>
                  m.public_url ? (
                    <Box key={m.id} component="img" src={m.public_url} alt={m.name} sx={{ width: 96, height: 96, objectFit: 'cover', borderRadius: 1 }} />
                  ) : (
                    <Chip key={m.id} label={m.name} size="small" />
                  ),
                )}
              </Stack>
            ) : (
              'None'
            )
          }
        />
        <DateTimeField source="created_at" label="Created" />
        <TextField source="id" label="Product ID" />
      </TabbedShowLayout.Tab>
      <TabbedShowLayout.Tab label="Checkout links" path="links">
        <Labeled label="Share a link: buyers open it to pay for this product">
          <ReferenceManyField reference="checkout-links" target="product_id" sort={{ field: 'created_at', order: 'DESC' }}>
            <DataTable<CheckoutLink> bulkActionButtons={false} rowClick={false} empty={<Typography variant="body2">No checkout link yet: use “Copy checkout link”.</Typography>}>
              <DataTable.Col source="label" render={(l) => l.label || '—'} />
              <DataTable.Col source="url" label="URL" render={(l) => <Box component="span" sx={{ wordBreak: 'break-all' }}>{l.url}</Box>} />
              <DataTable.Col label="Copy" render={(l) => <CopyButton value={l.url} what="Checkout link" label={`Copy ${l.label ?? 'link'}`} icon />} />
              <DataTable.Col source="created_at" label="Created" field={DateTimeField} />
            </DataTable>
          </ReferenceManyField>
        </Labeled>
      </TabbedShowLayout.Tab>
    </TabbedShowLayout>
  </Show>
);
