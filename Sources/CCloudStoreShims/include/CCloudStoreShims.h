#ifndef CCLOUDSTORE_SHIMS_H
#define CCLOUDSTORE_SHIMS_H

/* What Swift's Glibc module does not export (GNU extensions, names that clash). */
int CCloudStoreShims_syncfs(int fd);
int CCloudStoreShims_flock(int fd, int operation);
/* An open-file-description lock on bytes [start, start + length): exclusive when `exclusive`,
   released otherwise; waits. Independent of flock() on local file systems. */
int CCloudStoreShims_rangeLock(int fd, long start, long length, int exclusive);

/* CRC-32C of `length` bytes, continuing from `crc` (pass 0xFFFFFFFF to start, and invert the
   result): the SSE 4.2 instruction where the CPU has it, 0 and *done = 0 where not. */
unsigned int CCloudStoreShims_crc32c(unsigned int crc, const unsigned char *bytes, unsigned long length, int *done);

#endif
