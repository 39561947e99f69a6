/** Copies a value (a URL, a token) to the clipboard and says so. */
import { useNotify } from 'react-admin';
import { Button, IconButton, Tooltip } from '@mui/material';
import ContentCopyIcon from '@mui/icons-material/ContentCopy';

export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Older browsers, or no clipboard permission: the selection trick.
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
}

export const CopyButton = ({ value, label = 'Copy', what = 'Value', icon = false }: { value: string; label?: string; what?: string; icon?: boolean }) => {
  const notify = useNotify();
  const onClick = async (e: React.MouseEvent) => {
    e.stopPropagation();
    await copyText(value);
    notify(`${what} copied to the clipboard`, { type: 'info' });
  };
  if (icon) {
    return (
      <Tooltip title={label}>
        <IconButton aria-label={label} size="small" onClick={(e) => void onClick(e)}>
          <ContentCopyIcon fontSize="small" />
        </IconButton>
      </Tooltip>
    );
  }
  return (
    <Button size="small" startIcon={<ContentCopyIcon />} onClick={(e) => void onClick(e)}>
      {label}
    </Button>
  );
};
