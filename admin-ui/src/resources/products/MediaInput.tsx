/** Product images: uploaded through the files API with a progress bar; the form holds their ids. */
import { useState } from 'react';
import { useInput, useNotify } from 'react-admin';
import { Box, Button, IconButton, LinearProgress, Stack, Typography } from '@mui/material';
import DeleteIcon from '@mui/icons-material/Delete';
import UploadIcon from '@mui/icons-material/Upload';
import { uploadFile } from '../../common/upload.ts';

export interface Media {
  id: string;
  name: string;
  public_url?: string | null;
}

export const MediaInput = ({ source, initial = [] }: { source: string; initial?: Media[] }) => {
  const { field } = useInput<string[]>({ source, defaultValue: [] });
  const notify = useNotify();
  const [known, setKnown] = useState<Media[]>(initial);
  const [progress, setProgress] = useState<number | null>(null);
  const ids: string[] = field.value ?? [];

  const onFiles = async (files: FileList | null) => {
    if (!files?.length) return;
    for (const file of Array.from(files)) {
      try {
        setProgress(0);
        const uploaded = await uploadFile(file, 'product_media', setProgress);
        setKnown((k) => [...k, uploaded]);
        field.onChange([...(field.value ?? []), uploaded.id]);
      } catch (err) {
        notify(err instanceof Error ? err.message : 'Upload failed', { type: 'error' });
      } finally {
        setProgress(null);
      }
    }
  };

  return (
    <Box sx={{ my: 1, width: '100%' }}>
      <Typography variant="subtitle2" component="h3">
        Images
      </Typography>
      <Stack direction="row" spacing={1} sx={{ flexWrap: 'wrap', my: 1 }} useFlexGap>
        {ids.map((id) => {
          const media = known.find((m) => m.id === id);
          return (
            <Box key={id} sx={{ position: 'relative', width: 96, height: 96, border: 1, borderColor: 'divider', borderRadius: 1, overflow: 'hidden' }}>
              {media?.public_url ? (
                <img src={media.public_url} alt={media.name} style={{ width: '100%', height: '100%', objectFit: 'cover' }} />
              ) : (
                <Typography variant="caption" sx={{ p: 1, display: 'block' }}>
                  {media?.name ?? 'Image'}
                </Typography>
              )}
              <IconButton
                aria-label={`Remove ${media?.name ?? 'image'}`}
                size="small"
                sx={{ position: 'absolute', top: 0, right: 0, bgcolor: 'rgba(255,255,255,0.8)' }}
                onClick={() => field.onChange(ids.filter((x) => x !== id))}
              >
                <DeleteIcon fontSize="small" />
              </IconButton>
            </Box>
          );
        })}
      </Stack>
      {progress !== null ? (
        <Box sx={{ maxWidth: 320 }}>
          <LinearProgress variant="determinate" value={Math.round(progress * 100)} aria-label="Upload progress" />
          <Typography variant="caption">Uploading… {Math.round(progress * 100)}%</Typography>
        </Box>
      ) : (
        <Button component="label" size="small" startIcon={<UploadIcon />}>
          Upload images
          <input hidden type="file" accept="image/*" multiple onChange={(e) => void onFiles(e.target.files)} />
        </Button>
      )}
    </Box>
  );
};
