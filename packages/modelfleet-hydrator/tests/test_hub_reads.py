"""The Hub path's read settings hold on the libraries the image pins: if an upgrade renames
either knob, read_in_large_pieces would leave it alone and staging would slow down unseen."""

from httpcore2._sync.http11 import HTTP11Connection
from huggingface_hub import constants
from modelfleet_hydrator.hub_reads import READ_BYTES, read_in_large_pieces


def test_the_hub_download_reads_a_mebibyte_at_a_time_and_writes_each_piece_as_read():
    read_in_large_pieces()
    assert constants.DOWNLOAD_CHUNK_SIZE is None  # no 10 MiB gathering before each write
    assert HTTP11Connection.READ_NUM_BYTES >= READ_BYTES
