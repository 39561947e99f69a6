/**
 * Upload through the files API: create the file with its multipart parts (`POST /v1/files/`), PUT each
 * part to its presigned URL (XHR, for progress), then complete (`POST /v1/files/{id}/uploaded`).
 */
import { api } from './api.ts';
import { currentOrganizationId } from './organization.ts';

export interface UploadedFile {
  id: string;
  name: string;
  mime_type: string;
  size: number;
  size_readable?: string;
  public_url?: string | null;
  is_uploaded: boolean;
}

interface FileCreated extends UploadedFile {
  upload: { id: string; path: string; parts: { number: number; chunk_start: number; chunk_end: number; url: string; headers?: Record<string, string> }[] };
}

const PART_SIZE = 8 * 1024 * 1024;

function putPart(url: string, body: Blob, headers: Record<string, string>, onProgress: (loaded: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => onProgress(e.loaded);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve((xhr.getResponseHeader('ETag') ?? '').replace(/"/g, ''));
      else reject(new Error(`The storage refused the upload (${xhr.status})`));
    };
    xhr.onerror = () => reject(new Error('The upload failed: the storage could not be reached'));
    xhr.send(body);
  });
}

export async function uploadFile(
  file: File,
  service: 'product_media' | 'downloadable' | 'organization_avatar',
  onProgress: (fraction: number) => void,
): Promise<UploadedFile> {
  const parts = [];
  for (let start = 0, n = 1; start < Math.max(file.size, 1); start += PART_SIZE, n++) {
    // chunk_end is exclusive, as Polar's: the parts cover [0, size).
    parts.push({ number: n, chunk_start: start, chunk_end: Math.min(file.size, start + PART_SIZE) });
  }
  const created = await api<FileCreated>('/v1/files/', {
    body: {
      organization_id: currentOrganizationId(),
      name: file.name,
      mime_type: file.type || 'application/octet-stream',
      size: file.size,
      service,
      upload: { parts },
    },
  });
  const loaded = new Map<number, number>();
  const done = await Promise.all(
    created.upload.parts.map(async (part) => {
      const etag = await putPart(part.url, file.slice(part.chunk_start, part.chunk_end), part.headers ?? {}, (bytes) => {
        loaded.set(part.number, bytes);
        onProgress([...loaded.values()].reduce((a, b) => a + b, 0) / Math.max(file.size, 1));
      });
      return { number: part.number, checksum_etag: etag };
    }),
  );
  onProgress(1);
  return api<UploadedFile>(`/v1/files/${created.id}/uploaded`, {
    body: { id: created.upload.id, path: created.upload.path, parts: done },
  });
}
