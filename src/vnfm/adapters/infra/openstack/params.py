"""The additionalParams keys the OpenStack (Heat) infrastructure driver reads."""

from __future__ import annotations

from vnfm.domain.params import Declared, FreeForm, Params, doc


class OpenStackParams(Params):
    nfv: FreeForm | None = doc("`nfv.CP.<cp id>` overrides the Heat parameters of a CP, `nfv.VDU.<vdu id>` "
                               "(`flavor`, `image`) those of a VDU")
    heat_parameters: FreeForm | None = doc("values for parameters the BaseHOT declares")


DECLARED = Declared("OpenStack infrastructure driver", OpenStackParams)
