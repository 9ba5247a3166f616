Bfeatures.2.block.2.1.weightJ õPÌ9äGn9
ıì¹59Íñxº¿Ó+:¶	¹i‡‡¸