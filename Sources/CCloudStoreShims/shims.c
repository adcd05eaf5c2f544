#define _GNU_SOURCE
#include <unistd.h>
#include <sys/file.h>
#include <fcntl.h>
#include <string.h>
#include <stdio.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <dirent.h>
#include <sys/auxv.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include "CCloudStoreShims.h"

int CCloudStoreShims_syncfs(int fd) { return syncfs(fd); }
int CCloudStoreShims_flock(int fd, int operation) { return flock(fd, operation); }
int CCloudStoreShims_isStaticExecutable(void) { return getauxval(AT_BASE) == 0; }
int CCloudStoreShims_renameNoReplace(const char *from, const char *to) { return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE); }
const void *CCloudStoreShims_memrchr(const void *bytes, int byte, unsigned long length) { return memrchr(bytes, byte, length); }

int CCloudStoreShims_rangeLock(int fd, long start, long length, int exclusive) {
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = exclusive ? F_WRLCK : F_UNLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = start;
    fl.l_len = length;
    return fcntl(fd, F_OFD_SETLKW, &fl);
}

#if defined(__x86_64__)
#include <stdint.h>

__attribute__((target("sse4.2")))
static unsigned int crc32cHardware(unsigned int crc, const unsigned char *p, unsigned long n) {
    uint64_t c = crc;
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n > 0) {
        c32 = __builtin_ia32_crc32qi(c32, *p);
        p++;
        n--;
    }
    return c32;
}

unsigned int CCloudStoreShims_crc32c(unsigned int crc, const unsigned char *bytes, unsigned long length, int *done) {
    if (__builtin_cpu_supports("sse4.2")) {
        *done = 1;
        return crc32cHardware(crc, bytes, length);
    }
    *done = 0;
    return 0;
}
#else
unsigned int CCloudStoreShims_crc32c(unsigned int crc, const unsigned char *bytes, unsigned long length, int *done) {
    (void)crc; (void)bytes; (void)length;
    *done = 0;
    return 0;
}
#endif

int CCloudStoreShims_statIdentity(int fd, const char *path, unsigned int *mode,
                                  unsigned long long *inode, long long *size, unsigned long long *device) {
    int dirfd = path ? AT_FDCWD : fd, flags = path ? 0 : AT_EMPTY_PATH;
    if (!path) path = "";
    struct statx sx;
    if (statx(dirfd, path, flags, STATX_TYPE | STATX_MODE | STATX_INO | STATX_SIZE, &sx) == 0) {
        *mode = sx.stx_mode;
        *inode = sx.stx_ino;
        *size = (long long)sx.stx_size;
        *device = makedev(sx.stx_dev_major, sx.stx_dev_minor);
        return 0;
    }
    if (errno != ENOSYS) return -1;
    struct stat st;
    if (fstatat(dirfd, path, &st, flags) != 0) return -1;
    *mode = st.st_mode;
    *inode = st.st_ino;
    *size = (long long)st.st_size;
    *device = st.st_dev;
    return 0;
}

int CCloudStoreShims_limitMallocArenas(int count) {
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
    return mallopt(M_ARENA_MAX, count);
#else
    (void)count;
    return 0;
#endif
}

int CCloudStoreShims_releaseFreedMemory(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}

long long CCloudStoreShims_fileSystemType(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    return (long long)info.f_type;
}

long long CCloudStoreShims_freeBytes(const char *path) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    return (long long)info.f_bavail * (long long)info.f_bsize;
}

int CCloudStoreShims_openUnnamed(const char *directory, unsigned int mode) {
#ifdef O_TMPFILE
    return open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, (mode_t)mode);
#else
    errno = EOPNOTSUPP;
    return -1;
#endif
}

int CCloudStoreShims_linkUnnamed(int fd, const char *path) {
    char source[64];
    snprintf(source, sizeof source, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, source, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

const char *CCloudStoreShims_nextName(void *dir) {
    struct dirent *entry = readdir((DIR *)dir);
    return entry ? entry->d_name : NULL;
}
