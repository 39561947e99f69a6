/** Files: downloadables and product images; upload (multipart, with progress), rename, delete. */
import { useState } from 'react';
import { DataTable, DeleteButton, Edit, List, SimpleForm, TextInput, TopToolbar, required, useNotify, useRefresh } from 'react-admin';
import { Box, Button, LinearProgress, Typography } from '@mui/material';
import UploadIcon from '@mui/icons-material/Upload';
import { DateTimeField } from '../../common/money.tsx';
import { uploadFile, type UploadedFile } from '../../common/upload.ts';

const UploadButton = () => {
  const notify = useNotify();
  const refresh = useRefresh();
  const [progress, setProgress] = useState<number | null>(null);
  const onFiles = async (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) {
      try {
        setProgress(0);
        const f = await uploadFile(file, 'downloadable', setProgress);
        notify(`${f.name} uploaded`, { type: 'info' });
      } catch (err) {
        notify(err instanceof Error ? err.message : 'Upload failed', { type: 'error' });
      } finally {
        setProgress(null);
      }
    }
    refresh();
  };
  return progress !== null ? (
    <Box sx={{ width: 200 }}>
      <LinearProgress variant="determinate" value={Math.round(progress * 100)} aria-label="Upload progress" />
      <Typography variant="caption">Uploading… {Math.round(progress * 100)}%</Typography>
    </Box>
  ) : (
    <Button component="label" size="small" startIcon={<UploadIcon />}>
      Upload files
      <input hidden type="file" multiple onChange={(e) => void onFiles(e.target.files)} />
    </Button>
  );
};

export const FileList = () => (
  <List actions={<TopToolbar><UploadButton /></TopToolbar>} exporter={false} empty={false} sort={{ field: '', order: 'ASC' }}>
    <DataTable<UploadedFile & { created_at: string; service: string }> rowClick="edit" bulkActionButtons={false}>
      <DataTable.Col source="name" disableSort />
      <DataTable.Col source="mime_type" label="Type" disableSort />
      <DataTable.Col source="size_readable" label="Size" disableSort />
      <DataTable.Col source="service" label="Used for" disableSort render={(f) => f.service.replace(/_/g, ' ')} />
      <DataTable.Col source="is_uploaded" label="Uploaded" disableSort render={(f) => (f.is_uploaded ? 'Yes' : 'No')} />
      <DataTable.Col source="created_at" label="Created" disableSort field={DateTimeField} />
    </DataTable>
  </List>
);

export const FileEdit = () => (
  <Edit mutationMode="pessimistic" redirect="list" transform={(d: { name: string; version?: string | null }) => ({ name: d.name.trim(), version: d.version || null })} actions={<TopToolbar><DeleteButton mutationMode="pessimistic" /></TopToolbar>}>
    <SimpleForm>
      <TextInput source="name" validate={required()} fullWidth />
      <TextInput source="version" helperText="Optional, e.g. 1.2.0" />
    </SimpleForm>
  </Edit>
);
