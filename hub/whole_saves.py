"""The learners' servers on the trial hub save a file whole, or leave the old one as it was.

jupyter_server's atomic writing (2.x) copies the file aside, writes it in
place, and puts the copy back if writing fails. A save smaller than Python's
write buffer (8 KB) fails only when the buffer is flushed, after that check,
so on a full disk the file was left cut short: measured on a full tmpfs, a
4,710-byte notebook saved as its first 4,096 bytes, the old one kept as
`.~name`. Here the new version goes into a file of its own beside the old one
and replaces it (one rename) only once every byte is on disk.
hub/jupyterhub_config.py makes this the servers' contents manager.
"""

import contextlib
import os
import shutil
import tempfile

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager


class WholeSaves(AsyncLargeFileManager):
    @contextlib.contextmanager
    def atomic_writing(self, os_path, text=True, encoding="utf-8", **kwargs):
        if os.path.islink(os_path):  # write the file the link points at, as jupyter_server does
            os_path = os.path.join(os.path.dirname(os_path), os.readlink(os_path))
        with self.perm_to_403(os_path):
            fd, new = tempfile.mkstemp(dir=os.path.dirname(os_path), prefix=".~saving-")
            try:
                opened = open(fd, "w", encoding=encoding, newline="\n") if text else open(fd, "wb")
                with opened as f:
                    yield f
                    f.flush()
                    os.fsync(f.fileno())
                if os.path.exists(os_path):
                    shutil.copymode(os_path, new)
                else:
                    os.chmod(new, 0o666 & ~_umask())
                os.replace(new, os_path)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(new)
                raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
