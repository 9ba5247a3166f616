 B)encoder.block.1.layer.1.layer_norm.weightJ€˜:¼m_Å»Ôšž;ÈÛ/¼1*a»½²^¼ÐIë»ï£§¼¸+±»q§„;ºÖ;v[a<D0é;ÖP¼˜››<MÙ~<‚»‚)”¼š#;<-6»’öÌºxë(<m?¼}¾‰;ŽOJ»òoF;Ø*Ô»b¼øj<ê<§
¼H'£<