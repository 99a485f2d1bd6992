from .. import mstx as mstx
