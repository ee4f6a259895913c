"""grove's errors: one class per GroveStatus, each carrying grove's own message."""
from . import _lib


class GroveError(Exception):
    """An error grove reported; .status is the GroveStatus number, .message grove's message."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.message = message
        self.status = status


class GroveIOError(GroveError, OSError):
    """A file cannot be read, written or loaded (GROVE_ERROR_IO)."""


class GroveFormatError(GroveError, ValueError):
    """A model or artifact grove cannot read (GROVE_ERROR_FORMAT)."""


class GroveArgumentError(GroveError, ValueError):
    """A bad argument: an option, a schedule, rows of the wrong width (GROVE_ERROR_ARGUMENT)."""


class GroveUnavailableError(GroveError):
    """The artifact's back-end is not available here (GROVE_ERROR_UNAVAILABLE)."""


class GroveMemoryError(GroveError, MemoryError):
    """Out of memory (GROVE_ERROR_MEMORY)."""


class GroveDeviceError(GroveError):
    """The GPU, its driver or the simulator reported an error (GROVE_ERROR_DEVICE)."""


_BY_STATUS = {
    _lib.ERROR_IO: GroveIOError,
    _lib.ERROR_FORMAT: GroveFormatError,
    _lib.ERROR_ARGUMENT: GroveArgumentError,
    _lib.ERROR_UNAVAILABLE: GroveUnavailableError,
    _lib.ERROR_MEMORY: GroveMemoryError,
    _lib.ERROR_DEVICE: GroveDeviceError,
}


def from_status(status, error):
    """The exception for a GroveStatus and the GroveError the call filled."""
    message = error.message.decode("utf-8", "replace")
    return _BY_STATUS.get(status, GroveError)(message, status)


def check(status, error):
    """Raise the exception of a call's status (from_status) unless it is GROVE_OK."""
    if status != _lib.OK:
        raise from_status(status, error)


def argument(message):
    """A GroveArgumentError raised by the package itself (not by the C library)."""
    return GroveArgumentError(message, _lib.ERROR_ARGUMENT)
