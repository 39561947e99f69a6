/**
 * Create and edit a benefit, with the form of its type: custom note, license keys (prefix, expiry,
 * activations, usage), file downloads, meter credits, GitHub repository access, Discord role.
 * The type is chosen once; an edit sends it with the changes, as the API requires.
 */
import {
  AutocompleteArrayInput,
  BooleanInput,
  Create,
  Edit,
  FormDataConsumer,
  NumberInput,
  ReferenceArrayInput,
  ReferenceInput,
  SelectInput,
  SimpleForm,
  TextInput,
  maxLength,
  minLength,
  required,
  useInput,
  useNotify,
} from 'react-admin';
import { useState } from 'react';
import { Box, Button, LinearProgress, Typography } from '@mui/material';
import UploadIcon from '@mui/icons-material/Upload';
import { useQueryClient } from '@tanstack/react-query';
import { benefitTypes } from '../../common/choices.ts';
import { uploadFile } from '../../common/upload.ts';

interface BenefitValues {
  type: string;
  description: string;
  is_tax_applicable?: boolean;
  properties?: Record<string, any>;
}

const num = (v: unknown) => (v === '' || v === null || v === undefined ? null : Number(v));

/** Form values → API body: empty optional groups become null. */
export function toBenefitBody(data: BenefitValues) {
  const p = { ...(data.properties ?? {}) };
  let properties: Record<string, unknown> = {};
  switch (data.type) {
    case 'custom':
      properties = { note: p.note || null };
      break;
    case 'license_keys':
      properties = {
        prefix: p.prefix || null,
        expires: num(p.expires?.ttl) ? { ttl: num(p.expires.ttl), timeframe: p.expires.timeframe || 'year' } : null,
        activations: num(p.activations?.limit)
          ? { limit: num(p.activations.limit), enable_customer_admin: !!p.activations.enable_customer_admin }
          : null,
        limit_usage: num(p.limit_usage),
      };
      break;
    case 'downloadables':
      properties = { files: p.files ?? [], ...(p.archived ? { archived: p.archived } : {}) };
      break;
    case 'meter_credit':
      properties = { units: num(p.units), meter_id: p.meter_id, rollover: !!p.rollover };
      break;
    case 'github_repository':
      properties = { repository_owner: p.repository_owner, repository_name: p.repository_name, permission: p.permission };
      break;
    case 'discord':
      properties = { guild_id: p.guild_id || null, guild_token: p.guild_token || null, role_id: p.role_id };
      break;
  }
  return {
    type: data.type,
    description: data.description?.trim(),
    properties,
    ...(data.type === 'custom' ? { is_tax_applicable: !!data.is_tax_applicable } : {}),
  };
}

const FileUpload = () => {
  const { field } = useInput<string[]>({ source: 'properties.files' });
  const notify = useNotify();
  const queryClient = useQueryClient();
  const [progress, setProgress] = useState<number | null>(null);
  const onFiles = async (files: FileList | null) => {
    for (const file of Array.from(files ?? [])) {
      try {
        setProgress(0);
        const uploaded = await uploadFile(file, 'downloadable', setProgress);
        await queryClient.invalidateQueries({ queryKey: ['files'] });
        field.onChange([...(field.value ?? []), uploaded.id]);
        notify(`${uploaded.name} uploaded`, { type: 'info' });
      } catch (err) {
        notify(err instanceof Error ? err.message : 'Upload failed', { type: 'error' });
      } finally {
        setProgress(null);
      }
    }
  };
  return progress !== null ? (
    <Box sx={{ maxWidth: 320, mb: 2 }}>
      <LinearProgress variant="determinate" value={Math.round(progress * 100)} aria-label="Upload progress" />
      <Typography variant="caption">Uploading… {Math.round(progress * 100)}%</Typography>
    </Box>
  ) : (
    <Button component="label" size="small" startIcon={<UploadIcon />} sx={{ mb: 2 }}>
      Upload a file
      <input hidden type="file" multiple onChange={(e) => void onFiles(e.target.files)} />
    </Button>
  );
};

const TypeFields = () => (
  <FormDataConsumer<BenefitValues>>
    {({ formData }) => {
      switch (formData.type) {
        case 'custom':
          return (
            <>
              <TextInput source="properties.note" label="Note shown to the customer" multiline minRows={3} fullWidth />
              <BooleanInput source="is_tax_applicable" label="Tax applies" />
            </>
          );
        case 'license_keys':
          return (
            <>
              <TextInput source="properties.prefix" label="Key prefix" helperText="Optional, e.g. MYAPP" />
              <Box sx={{ display: 'flex', gap: 2, flexWrap: 'wrap' }}>
                <NumberInput source="properties.expires.ttl" label="Expires after" min={1} helperText="Leave empty: never expires" />
                <SelectInput
                  source="properties.expires.timeframe"
                  label="Unit"
                  defaultValue="year"
                  choices={[
                    { id: 'day', name: 'Days' },
                    { id: 'month', name: 'Months' },
                    { id: 'year', name: 'Years' },
                  ]}
                />
              </Box>
              <Box sx={{ display: 'flex', gap: 2, flexWrap: 'wrap', alignItems: 'center' }}>
                <NumberInput source="properties.activations.limit" label="Activation limit" min={1} max={50} helperText="Leave empty: no activations" />
                <BooleanInput source="properties.activations.enable_customer_admin" label="Customers can deactivate" />
              </Box>
              <NumberInput source="properties.limit_usage" label="Usage limit" min={1} helperText="Leave empty: unlimited" />
            </>
          );
        case 'downloadables':
          return (
            <>
              <ReferenceArrayInput source="properties.files" reference="files" perPage={100}>
                <AutocompleteArrayInput optionText="name" label="Files" validate={required()} />
              </ReferenceArrayInput>
              <FileUpload />
            </>
          );
        case 'meter_credit':
          return (
            <>
              <ReferenceInput source="properties.meter_id" reference="meters">
                <SelectInput optionText="name" label="Meter" validate={required()} />
              </ReferenceInput>
              <NumberInput source="properties.units" label="Units credited" min={1} validate={required()} />
              <BooleanInput source="properties.rollover" label="Unused units roll over" />
            </>
          );
        case 'github_repository':
          return (
            <>
              <TextInput source="properties.repository_owner" label="Repository owner" validate={required()} />
              <TextInput source="properties.repository_name" label="Repository name" validate={required()} />
              <SelectInput
                source="properties.permission"
                label="Permission"
                validate={required()}
                defaultValue="pull"
                choices={['pull', 'triage', 'push', 'maintain', 'admin'].map((p) => ({ id: p, name: p }))}
              />
            </>
          );
        case 'discord':
          return (
            <>
              <TextInput source="properties.guild_id" label="Server (guild) ID" />
              <TextInput source="properties.guild_token" label="Server token" type="password" />
              <TextInput source="properties.role_id" label="Role ID" validate={required()} />
            </>
          );
        default:
          return null;
      }
    }}
  </FormDataConsumer>
);

const Fields = ({ edit = false }: { edit?: boolean }) => (
  <>
    <SelectInput source="type" label="Type" choices={benefitTypes} validate={required()} readOnly={edit} />
    <TextInput source="description" label="Description" helperText="What the customer gets, 3 to 42 characters" validate={[required(), minLength(3), maxLength(42)]} fullWidth />
    <TypeFields />
  </>
);

export const BenefitCreate = () => (
  <Create transform={toBenefitBody} redirect="show">
    <SimpleForm defaultValues={{ type: 'custom' }}>
      <Fields />
    </SimpleForm>
  </Create>
);

export const BenefitEdit = () => (
  <Edit transform={toBenefitBody} mutationMode="pessimistic" redirect="show">
    <SimpleForm>
      <Fields edit />
    </SimpleForm>
  </Edit>
);
