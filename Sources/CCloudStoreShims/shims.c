#define _GNU_SOURCE
#include <unistd.h>
#include <sys/file.h>
#include <fcntl.h>
#include <string.h>
#include "CCloudStoreShims.h"

int CCloudStoreShims_syncfs(int fd) { return syncfs(fd); }
int CCloudStoreShims_flock(int fd, int operation) { return flock(fd, operation); }

int CCloudStoreShims_rangeLock(int fd, long start, long length, int exclusive) {
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = exclusive ? F_WRLCK : F_UNLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = start;
    fl.l_len = length;
    return fcntl(fd, F_OFD_SETLKW, &fl);
}
